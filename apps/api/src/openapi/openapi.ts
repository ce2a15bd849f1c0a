import { INestApplication } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject, ResponseObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { NextFunction, Request, Response } from 'express';
import { IS_PUBLIC } from '@app/auth';
import { docsCsp } from './docs-csp';
import { errorResponse, ErrorStatus, REQUEST_ID_HEADER } from './openapi-responses';

const TAGS: Record<string, string> = {
  events: 'Append events to their chain, list them, read one',
  export: 'Download the events of a period as JSON or CSV',
  verification: 'Check one event: its hash and its link to the previous event',
  chains: 'The account’s chains: their heads and sizes',
  checkpoints:
    'Signed checkpoints of a chain’s Merkle root (C2SP signed notes), their verifier key, whole-chain verification',
  health: 'Liveness and readiness probes',
  accounts: 'Who a key is (GET /v1/me); accounts and their counts (admin: its own, operator: every one)',
  keys: 'An account’s keys: list, create (secret shown once), revoke, rotate with overlap',
  proofs: 'RFC 9162 Merkle proofs of a chain: an event’s inclusion, a smaller tree’s consistency with a larger one',
  stats: 'Counts of the account’s events by action, actor, resource, chain, hour or day, for charts',
  retention:
    'Retention and legal hold of accounts and chains, and the sweep that prunes the prefix of each chain older than its retention',
  erasure:
    'Erase personal fields (actor, resource, context members) of version-2 events on request: values and salts deleted, commitments kept, every hash and proof unchanged',
  witnessing:
    'The checkpoint log (every chain checkpoint signed, in an RFC 9162 tree), the witnesses that cosign it (C2SP tlog-witness), and a chain checkpoint’s witnessed bundle',
  schemas:
    'Action schemas: a versioned JSON Schema per action (or action.* prefix) that appended events must satisfy (enforce) or are counted against (warn), and a preview of what a new version would refuse',
  destinations:
    'Where an account’s events are streamed (webhooks, Splunk HEC, Datadog, OTLP, syslog, NATS): settings, credentials shown once, pause, resume, replay',
};

/**
 * What the global pipe, guards and filter answer on every route (docs/contract.md §4, §5), with
 * what the HTTP parser's errors are answered (client-errors.ts), and on authenticated ones.
 */
const EVERY_ROUTE: ErrorStatus[] = [400, 408, 429, 431, 500];
const AUTHENTICATED_ROUTE: ErrorStatus[] = [401, 403, 503];
/** What JsonBodyGuard answers on every route that reads a body: too large, not JSON. */
const BODY_ROUTE: ErrorStatus[] = [413, 415];

/** The OpenAPI 3 description of the API, generated from the controllers and DTOs. */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Audit trail service')
    .setDescription(
      'Who-did-what events appended to per-account SHA-256 hash chains, listed, exported and verified. ' +
        'Responses are JSON in an envelope, { data } on success and { error: { code, message, details } } on failure, ' +
        'except the export file and the text of checkpoints; every response has an X-Request-Id header. ' +
        'Every path under /v1/ answers 401 without a valid key, whether a route serves it or not; with one, a method ' +
        'a path does not serve is 405 METHOD_NOT_ALLOWED with an Allow header. ' +
        'Keys have the scopes ingest (append events), read (every other read), admin (its own account’s keys) ' +
        'and operator (every account; keys of the account system only). Every change through the accounts and keys ' +
        'routes, and every export, is appended to the _audit chain of the account concerned; so is an operator’s ' +
        'reading of an account with accountId (operator.read, at most once an hour per key).',
    )
    .setVersion('1')
    .addServer('/', 'This service (paths are relative to where this document is served)')
    // Keys are opaque random strings, not JWTs: no bearerFormat.
    .addSecurity('bearer', { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <key>' })
    .addSecurityRequirements('bearer');
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build());
  describeCrossCuttingBehaviour(document, publicOperations(app));
  return document;
}

/**
 * Deny by default: only @Public() handlers (the guard's own metadata) need no key. Answered as
 * operation ids, which @nestjs/swagger makes `<Controller>_<method>` by default.
 */
function publicOperations(app: INestApplication): Set<string> {
  const reflector = app.get(Reflector);
  const ids = new Set<string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        if (reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, metatype])) ids.add(`${metatype.name}_${name}`);
      }
    }
  }
  return ids;
}

/** Responses no handler declares because the HTTP edge gives them to every route (app.setup.ts, guards, filter). */
function describeCrossCuttingBehaviour(document: OpenAPIObject, publicIds: Set<string>): void {
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation: OperationObject | undefined = item[method];
      if (!operation) continue;
      const isPublic = publicIds.has(operation.operationId ?? '');
      operation.security = isPublic ? [] : [{ bearer: [] }];
      const body = operation.requestBody ? BODY_ROUTE : [];
      for (const status of [...EVERY_ROUTE, ...(isPublic ? [] : AUTHENTICATED_ROUTE), ...body]) {
        operation.responses[status] ??= errorResponse(status);
      }
      operation.responses = Object.fromEntries(
        Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)),
      );
      for (const response of Object.values(operation.responses) as ResponseObject[]) {
        response.headers = { 'X-Request-Id': REQUEST_ID_HEADER, ...response.headers };
      }
    }
  }
}

/** GET /openapi.json, /openapi.yaml, and a browsable UI at /docs (all public, served from local files, the UI under docsCsp). */
export function serveOpenApi(app: INestApplication): void {
  app.use('/docs', underDocsCsp);
  SwaggerModule.setup('docs', app, () => openApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    // The UI would otherwise send the document to validator.swagger.io. Without the top bar, whose
    // only content here is Swagger's logo (the URL field is hidden), an SVG with an inline <style>
    // that docsCsp would refuse.
    swaggerOptions: { validatorUrl: null, layout: 'BaseLayout' },
  });
}

/** The policy of /docs's files other than its page (no inline style to allow). */
const DOCS_ASSETS_CSP = docsCsp('');

/**
 * Every answer under /docs carries docsCsp. @nestjs/swagger renders the page itself and exports no
 * way to render it elsewhere, so the hashes of its inline styles are taken from the page as it is
 * sent (the same text every time): the policy always fits the page, whatever version made it.
 */
function underDocsCsp(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', DOCS_ASSETS_CSP);
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    if (typeof body === 'string' && /^text\/html/.test(String(res.getHeader('Content-Type')))) {
      res.setHeader('Content-Security-Policy', docsCsp(body));
    }
    return send(body);
  };
  next();
}
