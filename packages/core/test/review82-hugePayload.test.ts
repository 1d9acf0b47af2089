/**
 * Review 82 (outbox, huge payloads), failing on main.
 *
 * What I did: emit a payload far over `maxPayloadBytes` (default 262,144 bytes): an object whose
 * JSON text is longer than a JavaScript string can be (about 2^29 characters), e.g. a document
 * that holds the same 100 MB attachment text under six keys. An application that handles
 * FERRY_PAYLOAD_TOO_LARGE (claim check: store the body elsewhere and emit a reference) relies on
 * that code for every payload over the limit.
 *
 * What happened: emit serializes the whole payload (JSON.stringify) before it compares its size
 * with the limit; JSON.stringify throws `RangeError: Invalid string length`, which
 * validateEnvelope's guard turns into FERRY_VALIDATION_FAILED on field `event`, reason "could not
 * be read: Invalid string length": neither the documented code nor the field, and after seconds of
 * work on a payload whose size was over the limit at its first 262,145 bytes.
 *
 * What should happen: docs/outbox.md, Envelope: `payload_too_large` "(code
 * FERRY_PAYLOAD_TOO_LARGE) over maxPayloadBytes": FerryValidationError with code
 * FERRY_PAYLOAD_TOO_LARGE, field `payload`, rule `payload_too_large`, whatever the size.
 *
 * Where: packages/core/src/outbox/envelope/validate.ts (validatePayload: JSON.stringify, then
 * Buffer.byteLength). Bounding the size during jsonFault's walk (string lengths, keys, punctuation)
 * would refuse it before serializing.
 */
import { emit, FerryValidationError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('review82: a payload whose JSON is longer than a string can be', () => {
  it('is refused as FERRY_PAYLOAD_TOO_LARGE on payload, as any payload over maxPayloadBytes', async () => {
    const attachment = 'a'.repeat(100_000_000);
    const payload = {
      a: attachment,
      b: attachment,
      c: attachment,
      d: attachment,
      e: attachment,
      f: attachment,
    };
    const error = await emit(t.db, { type: 'document.stored', payload }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryValidationError);
    const { code, field, details } = error as FerryValidationError;
    // On main: FERRY_VALIDATION_FAILED, field 'event', "could not be read: Invalid string length".
    expect({ code, field, rule: details.rule }).toEqual({
      code: 'FERRY_PAYLOAD_TOO_LARGE',
      field: 'payload',
      rule: 'payload_too_large',
    });
  }, 60_000);
});
