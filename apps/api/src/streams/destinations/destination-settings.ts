import { FieldError } from '@app/common';
import { destinationUrlProblem, formatsOf } from '../sinks';
import { DestinationKind, KIND_FIELDS, KindField, REQUIRED_CREDENTIAL } from './destination-kinds';

/** The settings whose rules depend on the kind (its fields, its URL, its formats), as a body gives them. */
export interface KindSettings {
  url?: string;
  format?: string;
  token?: string;
  apiKey?: string;
  sourcetype?: string;
  index?: string;
}

/**
 * What is wrong with `settings` for a `kind` destination (docs/contract.md §16), the one check of the
 * create and the change alike: a field of another kind, a missing credential (`creating`), a URL
 * the kind cannot send to, a format it does not write.
 */
export function kindProblems(
  kind: DestinationKind,
  settings: KindSettings,
  allowPrivateNetworks: boolean,
  creating: boolean,
): FieldError[] {
  const problems: FieldError[] = [];
  for (const [field, kinds] of Object.entries(KIND_FIELDS) as [KindField, readonly DestinationKind[]][]) {
    if (settings[field] !== undefined && !kinds.includes(kind))
      problems.push({ field, message: `${field} is taken by ${kinds.join(', ')} destinations only` });
  }
  const required = REQUIRED_CREDENTIAL[kind];
  if (creating && required && settings[required] === undefined)
    problems.push({ field: required, message: `${required} is required for a ${kind} destination` });
  const urlProblem =
    settings.url === undefined ? null : destinationUrlProblem(kind, settings.url, allowPrivateNetworks);
  if (urlProblem) problems.push({ field: 'url', message: `url ${urlProblem}` });
  const formats = formatsOf(kind);
  if (settings.format !== undefined && !formats.some((format) => format === settings.format))
    problems.push({
      field: 'format',
      message: `format of a ${kind} destination must be one of ${formats.join(', ')}`,
    });
  return problems;
}

/** A URL as `_audit` may hold it: without user information, query string or fragment (where credentials hide). */
export function auditedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return url.replace(/[?#].*$/s, '');
  }
}

/** The settings a change gives, as `_audit` records them: header names but no values, credentials named only. */
export function auditedSettings(settings: Record<string, unknown>): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  const credentials: string[] = [];
  for (const [field, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if (field === 'token' || field === 'apiKey') credentials.push(field);
    else if (field === 'headers') context.headers = Object.keys(value as Record<string, string>);
    else if (field === 'url') context.url = auditedUrl(value as string);
    else context[field] = value;
  }
  if (credentials.length > 0) context.credentials = credentials;
  return context;
}
