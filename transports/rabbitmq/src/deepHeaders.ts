/**
 * Tables and arrays a delivery's header table may hold inside each other before the deeper ones
 * are cut (read as void): far more than any application nests (RabbitMQ's own `x-death` is three).
 */
export const MAX_HEADER_DEPTH = 64;

const FRAME_HEADER = 2;
const FRAME_END = 0xce;
const BASIC_CLASS = 60;
/** Offset of the property flags in a content header frame's payload (class, weight, body size). */
const FLAGS_AT = 12;
const CONTENT_TYPE = 0x8000;
const CONTENT_ENCODING = 0x4000;
const HEADERS = 0x2000;
const TABLE = 0x46; // 'F'
const ARRAY = 0x41; // 'A'
const VOID = 0x56; // 'V'

/** Bytes of a field value after its tag, by tag; null for a tag amqplib does not read. */
function valueBytes(tag: number, buffer: Buffer, at: number): number | null {
  switch (String.fromCharCode(tag)) {
    case 't':
    case 'b':
    case 'B':
      return 1;
    case 's':
    case 'u':
      return 2;
    case 'I':
    case 'i':
    case 'f':
      return 4;
    case 'D':
      return 5;
    case 'd':
    case 'l':
    case 'T':
      return 8;
    case 'V':
      return 0;
    case 'S':
    case 'x':
      return at + 4 <= buffer.length ? 4 + buffer.readUInt32BE(at) : null;
    default:
      return null;
  }
}

/**
 * Whether the field table `table` (its content, without the length) holds tables or arrays more
 * than `limit` deep; null when its bytes cannot be read (amqplib's own error then), all of them
 * read but what lies past `limit`. Iterative: the depth it measures is what it guards against.
 */
function deeperThan(table: Buffer, limit: number): boolean | null {
  const stack: Array<{ end: number; array: boolean }> = [{ end: table.length, array: false }];
  let at = 0;
  let deep = false;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (at === top.end) {
      stack.pop();
      continue;
    }
    if (!top.array) at += 1 + table[at]!;
    if (at >= top.end) return null;
    const tag = table[at]!;
    at += 1;
    if (tag === TABLE || tag === ARRAY) {
      if (at + 4 > top.end) return null;
      const end = at + 4 + table.readUInt32BE(at);
      if (end > top.end) return null;
      if (stack.length > limit) {
        // Cut whole (cutContent): its content is length-checked, not read.
        deep = true;
        at = end;
        continue;
      }
      stack.push({ end, array: tag === ARRAY });
      at += 4;
    } else {
      const size = valueBytes(tag, table, at);
      if (size === null || at + size > top.end) return null;
      at += size;
    }
  }
  return deep;
}

/**
 * `content` (a table's or an array's) with every table or array at `depth` + 1 past `limit`
 * written as void. Recursion is bounded by `limit`; only called on content deeperThan read whole.
 */
function cutContent(content: Buffer, array: boolean, depth: number, limit: number): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < content.length) {
    const start = at;
    if (!array) at += 1 + content[at]!;
    const tag = content[at]!;
    at += 1;
    if (tag === TABLE || tag === ARRAY) {
      const end = at + 4 + content.readUInt32BE(at);
      if (depth >= limit) {
        parts.push(content.subarray(start, at - 1), Buffer.from([VOID]));
      } else {
        const inner = cutContent(content.subarray(at + 4, end), tag === ARRAY, depth + 1, limit);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(inner.length);
        parts.push(content.subarray(start, at), length, inner);
      }
      at = end;
    } else {
      at += valueBytes(tag, content, at)!;
      parts.push(content.subarray(start, at));
    }
  }
  return Buffer.concat(parts);
}

/**
 * A Basic content header frame's payload with its header table cut at MAX_HEADER_DEPTH
 * (cutContent), or null when it needs no cut (or cannot be read: left to amqplib).
 */
export function cutDeepHeaders(payload: Buffer, limit = MAX_HEADER_DEPTH): Buffer | null {
  if (payload.length < FLAGS_AT + 2 || payload.readUInt16BE(0) !== BASIC_CLASS) return null;
  const flags = payload.readUInt16BE(FLAGS_AT);
  if ((flags & HEADERS) === 0) return null;
  let at = FLAGS_AT + 2;
  for (const flag of [CONTENT_TYPE, CONTENT_ENCODING]) {
    if ((flags & flag) === 0) continue;
    if (at >= payload.length) return null;
    at += 1 + payload[at]!;
  }
  if (at + 4 > payload.length) return null;
  const end = at + 4 + payload.readUInt32BE(at);
  if (end > payload.length) return null;
  const table = payload.subarray(at + 4, end);
  if (deeperThan(table, limit) !== true) return null;
  const cut = cutContent(table, false, 0, limit);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(cut.length);
  return Buffer.concat([payload.subarray(0, at), length, cut, payload.subarray(end)]);
}

interface FrameReader {
  rest: Buffer;
  recvFrame(): unknown;
}

let installed = false;

/**
 * amqplib decodes (and encodes) a header table recursively: one nested some thousands of levels
 * deep, which another client can publish within the frame size, overflows its stack while it
 * decodes the delivery's content header ("Maximum call stack size exceeded"), which closes the
 * connection; the delivery comes back, and every consumer of the queue loses its connection on it
 * for ever (review 96). Each frame amqplib is about to read is looked at first: a Basic content
 * header whose header table is nested deeper than MAX_HEADER_DEPTH has the deeper tables and arrays
 * cut (read as void) before amqplib decodes it. Process-wide (every amqplib connection of this
 * amqplib copy), installed once, when ferry's first RabbitMQ connection is made. An amqplib laid
 * out otherwise than ferry's is left alone.
 */
export function installDeepHeaderCut(): void {
  if (installed) return;
  installed = true;
  let connection: { Connection?: { prototype: FrameReader } };
  let frames: { parseFrame?: (bin: Buffer) => unknown };
  try {
    // `require`, not createRequire: the amqplib instance `import amqplib` gets (under jest too).
    /* eslint-disable @typescript-eslint/no-require-imports */
    connection = require('amqplib/lib/connection') as typeof connection;
    frames = require('amqplib/lib/frame') as typeof frames;
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch {
    return;
  }
  const proto = connection.Connection?.prototype;
  const parseFrame = frames.parseFrame;
  const own = proto?.recvFrame;
  if (proto === undefined || typeof own !== 'function' || typeof parseFrame !== 'function') return;
  proto.recvFrame = function recvFrame(this: FrameReader) {
    let frame: { type: number; channel: number; payload: Buffer; rest: Buffer } | false;
    try {
      frame = parseFrame(this.rest) as typeof frame;
    } catch {
      frame = false; // amqplib's own parse throws the same
    }
    if (frame !== false && frame.type === FRAME_HEADER) {
      const payload = cutDeepHeaders(frame.payload);
      if (payload !== null) {
        const head = Buffer.alloc(7);
        head.writeUInt8(FRAME_HEADER, 0);
        head.writeUInt16BE(frame.channel, 1);
        head.writeUInt32BE(payload.length, 3);
        this.rest = Buffer.concat([head, payload, Buffer.from([FRAME_END]), frame.rest]);
      }
    }
    return own.call(this);
  };
}
