export type JsonBody =
  | { readonly ok: true; readonly payload: Record<string, unknown> }
  | { readonly ok: false; readonly detail: string };

/** Parses a message body that must be a JSON object; `detail` says why it is not one. */
export function parseJsonObjectBody(text: string): JsonBody {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    return { ok: false, detail: `body is not JSON: ${(error as Error).message}` };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { ok: false, detail: 'body is JSON but not an object' };
  }
  return { ok: true, payload: payload as Record<string, unknown> };
}
