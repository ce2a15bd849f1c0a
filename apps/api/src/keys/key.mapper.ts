import { MadeKey, Page } from '@app/auth';
import { ApiKeyRow } from '@app/database';
import { KeyView, NewKeyView } from './dto/key.view';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** The one place a key row becomes its wire shape: never the secret's digest. */
export function toKeyView(key: ApiKeyRow): KeyView {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: [...key.scopes],
    createdAt: key.createdAt.toISOString(),
    expiresAt: iso(key.expiresAt),
    revokedAt: iso(key.revokedAt),
    lastUsedAt: iso(key.lastUsedAt),
  };
}

export const keyBody = (key: ApiKeyRow): { data: KeyView } => ({ data: toKeyView(key) });
export const keysBody = ({ items, nextCursor }: Page<ApiKeyRow>): { data: KeyView[]; nextCursor?: string } => ({
  data: items.map(toKeyView),
  ...(nextCursor ? { nextCursor } : {}),
});
/** The secret is in this answer only. */
export const madeKeyBody = ({ key, secret }: MadeKey): { data: NewKeyView } => ({
  data: { ...toKeyView(key), secret },
});
