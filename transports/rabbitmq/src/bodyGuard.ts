/**
 * A consumer's bound on the bodies it reads (`maxBodyBytes`), applied before amqplib keeps any of
 * their bytes.
 *
 * Why it reaches into amqplib: amqplib (lib/channel.js, acceptMessage) receives every body whole
 * before the consume callback sees it: the content header frame announces the body's size
 * (`f.size`), and every content frame after it is pushed to a list and Buffer.concat'ed. The
 * broker allows bodies up to its `max_message_size` (128 MiB on RabbitMQ 3.x, 16 MiB on 4.x), and a
 * consumer holds up to `prefetch` (250) of them: a producer, hostile or buggy, could make one
 * consumer hold 32 GiB and end its process. amqplib has no option for it, so the consuming
 * channel's frame intake (`Channel.accept(frame)`) is wrapped: a content header announcing more
 * than the bound is kept back, the size it announced recorded for that delivery (unreadBody, keyed
 * by the properties object amqplib puts on the message: nothing a user sees is changed), and the
 * content frames that follow it are counted off and dropped: one frame (`frameMax`) at a time is
 * all such a body costs. Once the last one went by, amqplib is handed the header as one of an empty
 * body (it completes the delivery then, with an empty Buffer, as it would have completed the
 * body): settled earlier, the delivery's dead-letter copy waited for its confirm behind the rest of
 * the body on the same connection, past confirmTimeoutMs on a slow link, and went round for ever. AMQP sends a message's content frames
 * contiguously on its channel; other frames (confirms, a close) are handed on as they come. A body
 * within the bound that comes in one content frame is handed on in a Buffer of its own (ownBytes):
 * else a held delivery kept the whole socket read it came in.
 *
 * Checked against amqplib 0.10.8 and 0.10.9 (package.json: ^0.10.8): a channel's `accept` is a
 * method (its close replaces it with an own property, which ends the wrapper with the channel);
 * lib/defs exports the BasicProperties / BasicDeliver / BasicReturn / BasicGetOk ids; a content
 * header frame is `{ id: BasicProperties, size, fields }`, a content frame `{ content }` without
 * an id. An amqplib laid out otherwise is left alone (the consumer warns once and reads bodies
 * whole, as before).
 *
 * The state is the channel's own (a closure per wrapped channel): a channel closed in the middle
 * of a refused body leaves nothing behind for the next channel or connection.
 */
import type { Message } from 'amqplib';
import type { Logger } from '@ferry/core';

/** What the consumer knows of a body it did not read. */
export interface UnreadBody {
  /** The size its content header announced. */
  readonly bytes: number;
  /** The consumer's bound it was over (`maxBodyBytes`). */
  readonly bound: number;
}

interface Frame {
  readonly id?: number;
  readonly size?: unknown;
  readonly fields?: unknown;
  readonly content?: Buffer;
}

type Accept = (this: unknown, frame: Frame) => unknown;

interface FrameIds {
  readonly properties: number;
  /** Frames that start a message: a content header may only follow one of them. */
  readonly starts: ReadonlySet<number>;
}

/**
 * The header of a dead-letter copy of a body the consumer did not read: the size its content header
 * announced (the copy's own body is empty), beside `x-ferry-reject-reason` and `-detail`.
 */
export const UNREAD_BODY_HEADER = 'x-ferry-reject-body-bytes';

const unread = new WeakMap<object, UnreadBody>();

/** The body of `message` the consumer refused to read (its size and the bound), or undefined. */
export function unreadBody(message: Pick<Message, 'properties'>): UnreadBody | undefined {
  const properties: unknown = message.properties;
  return typeof properties === 'object' && properties !== null ? unread.get(properties) : undefined;
}

let frameIds: FrameIds | null | undefined;

/** amqplib's frame ids, or null when lib/defs is not as ferry knows it. */
function amqplibFrameIds(): FrameIds | null {
  if (frameIds !== undefined) return frameIds;
  try {
    // `require`, not createRequire: the amqplib instance `import amqplib` gets (under jest too).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const defs = require('amqplib/lib/defs') as Record<string, unknown>;
    const ids = ['BasicProperties', 'BasicDeliver', 'BasicReturn', 'BasicGetOk'].map((name) => defs[name]);
    frameIds = ids.every((id): id is number => typeof id === 'number')
      ? { properties: ids[0]!, starts: new Set(ids.slice(1)) }
      : null;
  } catch {
    frameIds = null;
  }
  return frameIds;
}

/**
 * Applies one consumer's `maxBodyBytes` to each channel it consumes on (guard). Warns once per
 * consumer when amqplib is not as expected, and reads bodies whole then.
 */
export class BodyGuard {
  private warned = false;

  constructor(
    private readonly maxBodyBytes: number,
    private readonly logger: Logger,
    private readonly queue: string,
    /** amqplib's frame ids (a test passes null: amqplib laid out otherwise). */
    private readonly ids: () => FrameIds | null = amqplibFrameIds,
  ) {}

  /** Wraps `channel`'s frame intake, before it consumes; false when it could not (warned once). */
  guard(channel: object): boolean {
    const intake = channel as { accept?: unknown };
    const own = intake.accept;
    const ids = this.ids();
    if (typeof own !== 'function' || ids === null) {
      if (!this.warned) {
        this.warned = true;
        this.logger.warn(
          { queue: this.queue, maxBodyBytes: this.maxBodyBytes },
          'ferry.rabbitmq: amqplib is not laid out as ferry knows it (no Channel.accept or lib/defs): ' +
            'maxBodyBytes is not applied, bodies are read whole before they are measured',
        );
      }
      return false;
    }
    intake.accept = boundedIntake(own as Accept, ids, this.maxBodyBytes);
    return true;
  }
}

/** `accept` with bodies over `bound` dropped frame by frame (see the file's comment). */
function boundedIntake(accept: Accept, ids: FrameIds, bound: number): Accept {
  /** Bytes of a refused body still to come. */
  let discarding = 0;
  /** The refused body's content header as amqplib is handed it (size 0), once the body went by. */
  let held: Frame | null = null;
  /** The size of the body being read, until its first content frame (0: none awaited). */
  let awaited = 0;
  const complete = (channel: unknown): void => {
    const header = held;
    discarding = 0;
    held = null;
    if (header !== null) accept.call(channel, header);
  };
  return function boundedAccept(this: unknown, frame: Frame) {
    if (discarding > 0) {
      if (frame.id === undefined && frame.content !== undefined) {
        const bytes = frame.content.length;
        if (bytes < discarding) {
          discarding -= bytes;
          return undefined;
        }
        // Its last frame: the delivery is complete, as amqplib would have completed it (before,
        // its copy's confirm came on the same connection only after the rest of the body).
        if (bytes === discarding) return complete(this);
        // More than announced: amqplib refuses the frame (after a complete message) and closes
        // the channel, as it does for a body longer than its header said.
        complete(this);
      } else if (frame.id !== undefined && (ids.starts.has(frame.id) || frame.id === ids.properties)) {
        // A message frame before the refused body ended: a broken stream, which amqplib would
        // refuse; the refused delivery is completed (empty), the next one is read as it comes.
        complete(this);
      }
    }
    if (frame.id === undefined && frame.content !== undefined && awaited > 0) {
      const whole = frame.content.length === awaited;
      awaited = 0;
      if (whole) return accept.call(this, { ...frame, content: ownBytes(frame.content) });
    }
    if (frame.id === ids.properties && typeof frame.size === 'number') {
      const properties = frame.fields;
      if (frame.size > bound && typeof properties === 'object' && properties !== null) {
        unread.set(properties, { bytes: frame.size, bound });
        discarding = frame.size;
        held = { ...frame, size: 0 };
        awaited = 0;
        return undefined;
      }
      awaited = frame.size;
    }
    return accept.call(this, frame);
  };
}

/**
 * `content` in a Buffer of its own. amqplib hands a body of one content frame over as it came: a
 * view into the bytes read from the socket with it (64 KiB and more: other deliveries, refused
 * bodies' frames), which a held delivery kept whole (10 bodies of 1,000 bytes held ~1 MiB). A
 * body of several frames is joined into a Buffer of its own already (Buffer.concat).
 */
function ownBytes(content: Buffer): Buffer {
  if (content.buffer.byteLength === content.length) return content;
  // Not Buffer.from: below 4 KiB it copies into Node's shared 8 KiB pool, which a held body keeps.
  const own = Buffer.allocUnsafeSlow(content.length);
  content.copy(own);
  return own;
}
