import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** The OpenAPI 3 description of the API, generated from the controllers and DTOs. */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Audit trail service')
    .setDescription(
      'Who-did-what events appended to per-account SHA-256 hash chains, listed, exported and verified. ' +
        'Every response is JSON in an envelope: { data } on success, { error: { code, message, details } } on failure, ' +
        'with an X-Request-Id header. Keys have the scopes ingest (POST /v1/events) and read (everything else).',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <key>' })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** GET /openapi.json and /openapi.yaml, and a browsable UI at /docs (all public, served from local files). */
export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => openApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    // The UI would otherwise send the document to validator.swagger.io.
    swaggerOptions: { validatorUrl: null },
  });
}
