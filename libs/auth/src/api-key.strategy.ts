import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-custom';
import { AuthenticatedKey } from './authenticated-key';
import { Authentication, KeyAuthenticator } from './key-authenticator';

export const API_KEY_STRATEGY = 'api-key';

/**
 * The passport strategy behind ApiKeyGuard. passport-custom hands it the request, of which
 * KeyAuthenticator reads the Authorization header alone (never `access_token` in the query
 * string or the body, which passport-http-bearer always reads). A valid key is passport's
 * success; every other outcome is a failure that carries the outcome, which the guard turns
 * into 401, 429 or 503. The body has not been read at this point, and is not touched.
 */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy<
  typeof Strategy,
  AuthenticatedKey,
  AuthenticatedKey | [false, Authentication]
>(Strategy, API_KEY_STRATEGY) {
  constructor(private readonly authenticator: KeyAuthenticator) {
    super();
  }

  /** A cached key is passport's success at once (no promise of ours); anything else once KeyAuthenticator knows. */
  validate(
    req: Request,
  ): AuthenticatedKey | [false, Authentication] | Promise<AuthenticatedKey | [false, Authentication]> {
    const authentication = this.authenticator.authenticate(req.headers.authorization, () => req.ip ?? 'unknown');
    return authentication instanceof Promise ? authentication.then(verdict) : verdict(authentication);
  }
}

/** Passport's arguments: the key, or no user and the outcome as the failure ApiKeyGuard reads. */
function verdict(authentication: Authentication): AuthenticatedKey | [false, Authentication] {
  return authentication.outcome === 'authenticated' ? authentication.key : [false, authentication];
}
