import type { components } from '../api-schema';
import { Http } from '../http';

/** /health: no key needed (docs/contract.md §1). */
export class HealthResource {
  constructor(private readonly http: Http) {}

  async live(): Promise<components['schemas']['HealthView']> {
    return (await this.http.call('get', '/health/live')).body.data;
  }

  /** AuditTrailError 503 while the database does not answer. */
  async ready(): Promise<components['schemas']['HealthView']> {
    return (await this.http.call('get', '/health/ready')).body.data;
  }
}
