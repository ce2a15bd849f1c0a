import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  HeaderObject,
  OperationObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { Response } from 'supertest';

/** Served by SwaggerModule itself, not operations of the API. */
const NOT_DESCRIBED = /^\/(openapi\.(json|yaml)|docs(\/.*)?)$/;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;
const ROOT = 'openapi';

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  literals: number;
  operation: OperationObject;
}

/**
 * Checks a response against the OpenAPI description: its status must be one the operation lists,
 * its Content-Type one that response lists, its body valid for that media type's schema, and its
 * headers present when required and valid for their schemas. A response to a path or method the
 * description does not have must be an error envelope. Objects in the description that list their
 * properties are held closed here (a member the description does not name fails), which the
 * published description does not promise to clients.
 */
export class OpenApiCheck {
  private readonly routes: Route[];
  private readonly bodies = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  private readonly headers = new Ajv({ allErrors: true, strict: true, coerceTypes: true });
  private readonly compiled = new WeakMap<Ajv, WeakMap<object, ValidateFunction>>();
  private readonly envelope: ValidateFunction;

  constructor(document: OpenAPIObject) {
    const closed = closeObjects(JSON.parse(JSON.stringify(document)) as OpenAPIObject);
    for (const ajv of [this.bodies, this.headers]) {
      addFormats(ajv);
      ajv.addVocabulary(['example', 'components', 'xml', 'externalDocs']);
      ajv.addSchema({ components: rebase(closed.components) }, ROOT);
    }
    this.routes = Object.entries(closed.paths)
      .flatMap(([template, item]) =>
        METHODS.filter((method) => item[method]).map((method) => ({
          method,
          template,
          pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
          literals: template.split('/').filter((segment) => !segment.startsWith('{')).length,
          operation: rebase(item[method]!),
        })),
      )
      .sort((a, b) => b.literals - a.literals);
    this.envelope = this.bodies.compile({ $ref: `${ROOT}#/components/schemas/ErrorEnvelope` });
  }

  /** Throws an Error that says what does not match; returns when the response is described. */
  check(method: string, url: string, res: Response): void {
    const path = new URL(url, 'http://test').pathname;
    if (NOT_DESCRIBED.test(path)) return;
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const route = this.routes.find((r) => r.method === verb && r.pattern.test(path));
    const where = `${method.toUpperCase()} ${path} → ${res.status}`;
    if (!route) {
      if (res.status < 400) throw new Error(`${where}: no operation is described for this method and path`);
      this.validate(this.envelope, parseJson(res, where), `${where}: the error body`);
      return;
    }
    const response = (route.operation.responses[String(res.status)] ?? route.operation.responses.default) as
      ResponseObject | undefined;
    const name = `${route.method.toUpperCase()} ${route.template}`;
    if (!response) {
      const listed = Object.keys(route.operation.responses).join(', ');
      throw new Error(`${where}: ${name} does not list status ${res.status} (it lists ${listed})`);
    }
    this.checkHeaders(response, res, `${where} (${name})`);
    if (!response.content || method.toLowerCase() === 'head') return;
    const mediaType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const media = response.content[mediaType];
    if (!media?.schema) {
      const listed = Object.keys(response.content).join(', ');
      throw new Error(`${where}: Content-Type "${mediaType}" is not described for ${name} (described: ${listed})`);
    }
    const body = /[/+]json$/.test(mediaType) ? parseJson(res, where) : textOf(res);
    this.validate(this.compile(media.schema as SchemaObject), body, `${where}: the ${mediaType} body of ${name}`);
  }

  private checkHeaders(response: ResponseObject, res: Response, where: string): void {
    for (const [header, described] of Object.entries(response.headers ?? {}) as [string, HeaderObject][]) {
      const value = res.headers[header.toLowerCase()];
      if (value === undefined) {
        if (described.required) throw new Error(`${where}: the required header ${header} is missing`);
        continue;
      }
      if (!described.schema) continue;
      const validate = this.compile(described.schema as SchemaObject, this.headers);
      this.validate(validate, value, `${where}: header ${header}`);
    }
  }

  private compile(schema: SchemaObject, ajv = this.bodies): ValidateFunction {
    let cache = this.compiled.get(ajv);
    if (!cache) this.compiled.set(ajv, (cache = new WeakMap()));
    let validate = cache.get(schema);
    if (!validate) cache.set(schema, (validate = ajv.compile(schema)));
    return validate;
  }

  private validate(validate: ValidateFunction, value: unknown, what: string): void {
    if (validate(value)) return;
    const problems = (validate.errors ?? [])
      .map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('; ');
    throw new Error(`${what} does not match the OpenAPI description: ${problems}\n${preview(value)}`);
  }
}

/** The response's text, however the test had supertest buffer or parse it. */
function textOf(res: Response): string {
  if (typeof res.text === 'string') return res.text;
  if (Buffer.isBuffer(res.body)) return res.body.toString('utf8');
  if (typeof res.body === 'string') return res.body;
  throw new Error('the response body was not buffered as text');
}

function parseJson(res: Response, where: string): unknown {
  if (!/[/+]json(;|$)/i.test(String(res.headers['content-type'] ?? ''))) {
    throw new Error(`${where}: expected a JSON body, got Content-Type "${String(res.headers['content-type'])}"`);
  }
  try {
    return JSON.parse(textOf(res)) as unknown;
  } catch {
    throw new Error(`${where}: the body is not JSON: ${preview(textOf(res))}`);
  }
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** `#/components/…` references as references into the document registered as ROOT. */
function rebase<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/"\$ref":"#\//g, `"$ref":"${ROOT}#/`)) as T;
}

/** Every schema that lists its properties and says nothing of others: no others. */
function closeObjects(value: OpenAPIObject): OpenAPIObject {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    const combined = 'allOf' in schema || 'oneOf' in schema || 'anyOf' in schema;
    if (schema.type === 'object' && schema.properties && !('additionalProperties' in schema) && !combined) {
      schema.additionalProperties = false;
    }
    Object.values(schema).forEach(visit);
  };
  visit(value);
  return value;
}
