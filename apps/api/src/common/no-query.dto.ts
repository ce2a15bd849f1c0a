/**
 * The query of an endpoint that takes no query parameters. With the global ValidationPipe's
 * forbidNonWhitelisted, any parameter sent is a 400 VALIDATION_ERROR (contract §4).
 */
export class NoQueryDto {}
