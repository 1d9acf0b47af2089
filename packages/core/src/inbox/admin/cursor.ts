import { decodeListCursor, encodeListCursor, listingOf } from '../../listCursor';

/**
 * Inbox list cursors: the last id, bound to the scope ('tenant:…', 'global', or null for the
 * privileged list of every scope) and the status filter they were issued for (listCursor.ts).
 */
export function encodeCursor(lastId: string, scope: string | null, status: string | null): string {
  return encodeListCursor([lastId], listingOf('inbox', scope, status));
}

export function decodeCursor(cursor: string, scope: string | null, status: string | null): string {
  const { position } = decodeListCursor(cursor, listingOf('inbox', scope, status), ['uuid']);
  return position[0] as string;
}
