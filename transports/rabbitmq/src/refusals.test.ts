import { channelRefusal, namedExchanges, SuspectExchanges } from './refusals';

/** A reply text as RabbitMQ sends it (cut to 252 bytes and "..." past 255) and amqplib decodes it. */
function replyText(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= 255) return text;
  return Buffer.concat([bytes.subarray(0, 252), Buffer.from('...')]).toString('utf8');
}

const internal = (name: string) =>
  replyText(`ACCESS_REFUSED - cannot publish to internal exchange '${name}' in vhost '/'`);
const write = (name: string) =>
  replyText(`ACCESS_REFUSED - access to exchange '${name}' in vhost '/' refused for user 'guest'`);

describe('namedExchanges', () => {
  test('a full name is matched exactly, not its prefixes nor its extensions', () => {
    expect(namedExchanges(write('orders'), ['orders', 'order', 'orders2', 'billing'])).toEqual(
      new Set(['orders']),
    );
  });

  test('quotes in names: the name followed by the rest of the sentence decides', () => {
    const names = ["a'b", 'a', "a'b' in vhost '/"];
    expect(namedExchanges(internal("a'b"), names)).toEqual(new Set(["a'b"]));
    expect(namedExchanges(internal('a'), names)).toEqual(new Set(['a']));
  });

  test('a text naming "exchange \'" twice (a routing key or a name holding it) suspects each', () => {
    const text = replyText(
      "ACCESS_REFUSED - access to topic 'exchange 'decoy' in vhost '' in exchange 'real' in vhost '/' refused for user 'guest'",
    );
    expect(namedExchanges(text, ['real', 'decoy', 'other'])).toEqual(new Set(['real', 'decoy']));
  });

  test('a text cut inside a multibyte character (U+FFFD) matches every exchange the cut name is a prefix of', () => {
    const stem = `x__${'é'.repeat(110)}`;
    const text = internal(`${stem}A`);
    expect(text).toMatch(/\uFFFD\.\.\.$/u);
    expect(namedExchanges(text, [`${stem}A`, `${stem}B`, 'x__', `y_${'é'.repeat(110)}`])).toEqual(
      new Set([`${stem}A`, `${stem}B`]),
    );
  });

  test('a text cut between characters, or inside the vhost, still names a single exchange', () => {
    const long = `${'q'.repeat(180)}'"🐇`;
    expect(namedExchanges(internal(long), [long, 'q'])).toEqual(new Set([long]));
    const vhostCut = replyText(
      `ACCESS_REFUSED - access to exchange 'orders' in vhost '${'v'.repeat(300)}' refused for user 'guest'`,
    );
    expect(vhostCut.endsWith('...')).toBe(true);
    expect(namedExchanges(vhostCut, ['orders', 'order'])).toEqual(new Set(['orders']));
  });

  test('a text naming no exchange (a refusal of the message itself) names none', () => {
    const text = 'PRECONDITION_FAILED - message size 200 is larger than configured max size 100';
    expect(namedExchanges(text, ['orders', ''])).toEqual(new Set());
  });

  test('the default exchange is named amq.default', () => {
    expect(namedExchanges(write('amq.default'), ['', 'orders'])).toEqual(new Set(['']));
  });
});

describe('channelRefusal', () => {
  test('the reply text of an amqplib channel error', () => {
    const error = Object.assign(
      new Error(
        `Channel closed by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - access to exchange 'a "with message "' in vhost '/' refused for user 'guest'"`,
      ),
      { code: 403 },
    );
    expect(channelRefusal(error)).toEqual({
      code: 403,
      text: `ACCESS_REFUSED - access to exchange 'a "with message "' in vhost '/' refused for user 'guest'`,
      message: error.message,
    });
  });

  test('an error without a reply code is no refusal', () => {
    expect(channelRefusal(new Error('Channel closed'))).toBeNull();
    expect(channelRefusal(null)).toBeNull();
  });
});

test('SuspectExchanges forgets the oldest past its limit, and an exchange cleared', () => {
  const suspects = new SuspectExchanges(2);
  suspects.suspect('a');
  suspects.suspect('b');
  suspects.suspect('a');
  suspects.suspect('c');
  expect(['a', 'b', 'c'].map((name) => suspects.has(name))).toEqual([true, false, true]);
  suspects.cleared('a');
  expect(suspects.has('a')).toBe(false);
});
