import { headerShapeFault, headerShapeReason } from '../validate/headers';
import { isPlainObject, kindOf } from '../validate/json';
import { inexactPayloadOf } from '../validate/storedJson';
import { InboxInvalidPayloadError } from './errors';
import type { ClaimedReceipt } from './types';

/**
 * The payload a claimed receipt's handler is given; throws InboxInvalidPayloadError (DEAD at once,
 * reason `invalid_payload`) when there is none to give: purged, or one accept() would not store.
 * The table's jsonb columns take any JSON, so a receipt inserted by SQL (a migration from another
 * inbox library, a hand-written fix) may hold a payload that is no object, or a number JSON.parse
 * changes (read from the payload's text, toClaimed): 12345678901234567891, exact in jsonb, would
 * reach the handler as 12345678901234567000, another order's id. Its headers (the handler's
 * context types them as strings) must be an object of strings too.
 */
export function storedPayload(receipt: ClaimedReceipt): Record<string, unknown> {
  const payload: unknown = receipt.payload;
  if (payload === null && receipt.payloadPurgedAt !== null)
    throw new InboxInvalidPayloadError('the payload is no longer stored');
  if (!isPlainObject(payload)) throw foreign(`payload is ${kindOf(payload)}, not a JSON object`);
  const inexact = inexactPayloadOf(receipt);
  if (inexact !== null) throw foreign(`payload: ${inexact}`);
  const shape = headerShapeFault(receipt.headers);
  if (shape !== null) throw foreign(headerShapeReason(shape));
  return payload;
}

function foreign(fault: string): InboxInvalidPayloadError {
  return new InboxInvalidPayloadError(`${fault} (a receipt accept() would not store)`);
}
