/**
 * The query of an endpoint that takes no query parameters. With the global ValidationPipe's
 * forbidNonWhitelisted, any parameter sent is a 400 VALIDATION_ERROR (docs/contract.md §4).
 */
export class NoQueryDto {}
