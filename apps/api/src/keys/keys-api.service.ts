import { instantMillis, DEFAULT_ROTATION_OVERLAP_SECONDS, PageQueryDto } from '@app/common';
import { Injectable } from '@nestjs/common';
import { AuthenticatedKey, KeysService } from '@app/auth';
import { CreateKeyDto } from './dto/create-key.dto';
import { KeyView, NewKeyView } from './dto/key.view';
import { RotateKeyDto } from './dto/rotate-key.dto';
import { keyBody, keysBody, madeKeyBody } from './key.mapper';

/** The HTTP face of KeysService (libs/auth, shared with the key CLI, where every rule lives): DTOs in, views out. */
@Injectable()
export class KeysApiService {
  constructor(private readonly keys: KeysService) {}

  list(
    caller: AuthenticatedKey,
    accountId: string,
    query: PageQueryDto,
  ): Promise<{ data: KeyView[]; nextCursor?: string }> {
    return this.keys.list(caller, accountId, query.limit, query.cursor).then(keysBody);
  }

  create(caller: AuthenticatedKey, accountId: string, dto: CreateKeyDto): Promise<{ data: NewKeyView }> {
    const expiresAt = dto.expiresAt === undefined ? null : new Date(instantMillis(dto.expiresAt)!);
    return this.keys.create(caller, accountId, { name: dto.name, scopes: dto.scopes, expiresAt }).then(madeKeyBody);
  }

  revoke(caller: AuthenticatedKey, accountId: string, keyId: string): Promise<{ data: KeyView }> {
    return this.keys.revoke(caller, accountId, keyId).then(keyBody);
  }

  rotate(caller: AuthenticatedKey, accountId: string, keyId: string, dto: RotateKeyDto): Promise<{ data: NewKeyView }> {
    const overlap = dto.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS;
    return this.keys.rotate(caller, accountId, keyId, overlap).then(madeKeyBody);
  }
}
