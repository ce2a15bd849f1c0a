import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { ApiKeyStore } from './api-key.store';
import { AuthenticatedKey } from './authenticated-key';

export const API_KEY_STRATEGY = 'api-key';

/** `Authorization: Bearer <key>`; anything else fails the same way. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, API_KEY_STRATEGY) {
  constructor(private readonly store: ApiKeyStore) {
    super();
  }

  async validate(token: string): Promise<AuthenticatedKey | false> {
    return (await this.store.authenticate(token)) ?? false;
  }
}
