import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import { setOwnProperty } from '@ferry/core/transport';

/** A received message with SNS's notification envelope taken off, or why it has none. */
export type SnsUnwrapped =
  | {
      readonly ok: true;
      /** The delivery as the application published it: Body the notification's `Message`, its attributes SNS's. */
      readonly message: Message;
      /** SNS's MessageId: one per publish, the same in every delivery of it (SNS retries, every subscribed queue). */
      readonly snsMessageId: string;
    }
  | { readonly ok: false; readonly detail: string };

const RAW_HINT =
  "; the consumer's envelope: 'sns' takes only SNS notifications (a subscription with raw message delivery off)";

/**
 * The notification SNS delivers to a subscribed queue when raw message delivery is off: a JSON
 * object `{ Type: 'Notification', MessageId, TopicArn, Message, MessageAttributes?, ... }` whose
 * `Message` is the published text and whose `MessageAttributes` (`{ Type, Value }`, Binary ones
 * base64) are the published attributes. Returns the message with `Body` the published text and
 * `MessageAttributes` the published ones (as SQS would have delivered them raw); every other
 * field of the SQS message (MessageId, ReceiptHandle, Attributes) as received. The signature is
 * not checked: anyone allowed to send to the queue can write such a body, as they can set any
 * attribute.
 */
export function unwrapSnsNotification(message: Message): SnsUnwrapped {
  const body = message.Body ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.startsWith('\uFEFF') ? body.slice(1) : body);
  } catch (error) {
    return { ok: false, detail: `body is not JSON: ${(error as Error).message}${RAW_HINT}` };
  }
  const envelope = isRecord(parsed) ? parsed : null;
  if (envelope?.Type !== 'Notification') {
    const type =
      typeof envelope?.Type === 'string' ? ` (Type ${JSON.stringify(envelope.Type).slice(0, 80)})` : '';
    // A subscription's first message, when SNS asks the queue's owner to confirm it (another
    // account's topic, or a Subscribe call without the queue's permission): its SubscribeURL
    // confirms it, which ferry never visits; the copy keeps it.
    const confirm =
      envelope?.Type === 'SubscriptionConfirmation'
        ? ': confirm the subscription with its SubscribeURL (or ConfirmSubscription with its Token)'
        : '';
    return { ok: false, detail: `body is not an SNS notification${type}${confirm}${RAW_HINT}` };
  }
  const { MessageId: snsMessageId, Message: published, MessageAttributes: given } = envelope;
  if (typeof snsMessageId !== 'string' || snsMessageId.length === 0 || typeof published !== 'string') {
    return { ok: false, detail: `SNS notification without a MessageId or a Message string${RAW_HINT}` };
  }
  const attributes: Record<string, MessageAttributeValue> = {};
  if (given !== undefined) {
    if (!isRecord(given))
      return { ok: false, detail: 'SNS notification whose MessageAttributes is not an object' };
    for (const [name, attribute] of Object.entries(given)) {
      const type = isRecord(attribute) ? attribute.Type : undefined;
      const value = isRecord(attribute) ? attribute.Value : undefined;
      if (typeof type !== 'string' || typeof value !== 'string') {
        return {
          ok: false,
          detail: `SNS notification attribute ${JSON.stringify(name).slice(0, 200)} is not { Type, Value }`,
        };
      }
      const bytes = type.startsWith('Binary') ? base64Bytes(value) : undefined;
      if (bytes === null) {
        return {
          ok: false,
          detail: `SNS notification attribute ${JSON.stringify(name).slice(0, 200)} is Binary whose Value is not base64 as SNS writes it`,
        };
      }
      setOwnProperty(
        attributes,
        name,
        bytes === undefined ? { DataType: type, StringValue: value } : { DataType: type, BinaryValue: bytes },
      );
    }
  }
  return { ok: true, message: { ...message, Body: published, MessageAttributes: attributes }, snsMessageId };
}

/**
 * The bytes of `value` when it is base64 as SNS writes it (the standard alphabet, padded), else
 * null. Node's decoder is lenient: it skips characters that are not base64 and stops at padding,
 * so `YWNtZQ==one` and `YWNtZQ==two` both read as `acme`: two identities or tenants that differ
 * only in what is not base64 would become one (as readFerryHeaders never decodes bytes that are
 * not UTF-8 lossily). Only a value that decodes and encodes back to itself is read.
 */
function base64Bytes(value: string): Buffer | null {
  const bytes = Buffer.from(value, 'base64');
  return bytes.toString('base64') === value ? bytes : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
