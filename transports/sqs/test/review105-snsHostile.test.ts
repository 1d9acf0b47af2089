/**
 * Hostile SNS notifications under `envelope: 'sns'` (review 105), decoded as the consumer decodes
 * each received message (decodeMessage, pure).
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { decodeMessage, type Decoded, type DecodeOptions } from '../src/wire';

const options: DecodeOptions = {
  consumer: 'orders',
  maxPayloadBytes: 65_536,
  identity: null,
  envelope: 'sns',
  tenant: 'header',
};

function envelope(fields: Record<string, unknown>): Message {
  return {
    MessageId: 'sqs-1',
    ReceiptHandle: 'r',
    Body: JSON.stringify({
      Type: 'Notification',
      MessageId: 'sns-1',
      TopicArn: 'arn:aws:sns:us-east-1:123456789012:orders',
      Message: '{"n":1}',
      ...fields,
    }),
  };
}

const binary = (Value: string) => ({ Type: 'Binary', Value });

function refused(decoded: Decoded): { reason: string; detail: string } {
  if (decoded.ok) throw new Error(`accepted: ${JSON.stringify(decoded.input)}`);
  return { reason: decoded.reason, detail: decoded.detail };
}

describe("SQS consumer, envelope: 'sns': hostile notifications", () => {
  it('never reads a Binary Value that is not base64 as other bytes (two ids would be one)', () => {
    // Node's base64 decoder stops at padding and skips what is not base64: these read as "acme".
    for (const Value of ['YWNtZQ==one', 'YWNtZQ==two', 'YW!NtZQ==', 'YWNtZQ']) {
      const decoded = decodeMessage(
        envelope({ MessageAttributes: { [FERRY_HEADERS.messageId]: binary(Value) } }),
        options,
      );
      expect(refused(decoded)).toEqual({
        reason: 'unparseable_body',
        detail: expect.stringContaining(
          `attribute "${FERRY_HEADERS.messageId}" is Binary whose Value is not base64`,
        ),
      });
    }
    const other = decodeMessage(envelope({ MessageAttributes: { 'app.blob': binary('%%%') } }), options);
    expect(refused(other).reason).toBe('unparseable_body');
  });

  it('reads base64 Binary values, the empty one as no value', () => {
    const decoded = decodeMessage(
      envelope({
        MessageAttributes: {
          [FERRY_HEADERS.tenantId]: binary(Buffer.from('acme').toString('base64')),
          [FERRY_HEADERS.messageId]: binary(''),
        },
      }),
      options,
    );
    expect(decoded.ok && [decoded.input.messageId, decoded.input.tenantId]).toEqual(['sns-1', 'acme']);
  });

  it('holds SNS MessageId to the rule of every identity', () => {
    expect(refused(decodeMessage(envelope({ MessageId: 'a\u0007b' }), options)).reason).toBe(
      'missing_identity',
    );
    expect(refused(decodeMessage(envelope({ MessageId: 'ferry:x' }), options)).reason).toBe(
      'missing_identity',
    );
    expect(refused(decodeMessage(envelope({ MessageId: ' ' }), options)).reason).toBe('missing_identity');
  });

  it('refuses a Message that is not a JSON object as any body', () => {
    for (const Message of ['[1]', 'null', '"text"', '7', '{']) {
      expect(refused(decodeMessage(envelope({ Message }), options)).reason).toBe('unparseable_body');
    }
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    expect(refused(decodeMessage(envelope({ Message: `{"a":${deep}}` }), options)).reason).toBe(
      'payload_too_deep',
    );
    expect(
      refused(
        decodeMessage(envelope({ Extra: JSON.parse(`{"a":${'['.repeat(500)}${']'.repeat(500)}}`) }), options),
      ).reason,
    ).toBe('payload_too_deep');
  });

  it("names a subscription's confirmation and how to confirm it", () => {
    const decoded = decodeMessage(
      envelope({
        Type: 'SubscriptionConfirmation',
        SubscribeURL: 'https://sns.example/?Action=ConfirmSubscription',
      }),
      options,
    );
    expect(refused(decoded)).toEqual({
      reason: 'unparseable_body',
      detail: expect.stringContaining('SubscribeURL'),
    });
  });

  it("takes ferry's attributes from the envelope only, never from the SQS message beside it", () => {
    const message = envelope({
      MessageAttributes: { [FERRY_HEADERS.tenantId]: { Type: 'String', Value: 'acme' } },
    });
    message.MessageAttributes = {
      [FERRY_HEADERS.tenantId]: { DataType: 'String', StringValue: 'evil' },
      [FERRY_HEADERS.messageId]: { DataType: 'String', StringValue: 'forged' },
    };
    const decoded = decodeMessage(message, options);
    expect(decoded.ok && [decoded.input.messageId, decoded.input.tenantId]).toEqual(['sns-1', 'acme']);
    const fixed = decodeMessage(message, { ...options, tenant: { fixed: 'acme' } });
    expect(fixed.ok).toBe(true);
  });
});
