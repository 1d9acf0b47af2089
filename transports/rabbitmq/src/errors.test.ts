import { isRefusal } from './errors';

/** An amqplib channel or connection error as it reaches attach(): its reply code and message. */
const closed = (code: number, name: string, text: string) => ({
  code,
  message: `Operation failed: BasicConsume; ${code} (${name}) with message "${text}"`,
});

describe('isRefusal', () => {
  it('is true of what only an operator can fix: permissions, queue arguments, a missing vhost', () => {
    expect(
      isRefusal(
        closed(
          403,
          'ACCESS-REFUSED',
          "ACCESS_REFUSED - access to queue 'q' in vhost '/' refused for user 'u'",
        ),
      ),
    ).toBe(true);
    expect(
      isRefusal(
        closed(
          406,
          'PRECONDITION-FAILED',
          "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'q'",
        ),
      ),
    ).toBe(true);
    expect(isRefusal(closed(530, 'NOT-ALLOWED', 'NOT_ALLOWED - vhost v not found'))).toBe(true);
  });

  it('is false of a refusal that ends by itself: an exclusive consumer elsewhere, a limit reached, a vhost down', () => {
    expect(
      isRefusal(closed(403, 'ACCESS-REFUSED', "ACCESS_REFUSED - queue 'q' in vhost '/' in exclusive use")),
    ).toBe(false);
    expect(
      isRefusal(
        closed(405, 'RESOURCE-LOCKED', 'RESOURCE_LOCKED - cannot obtain exclusive access to locked queue'),
      ),
    ).toBe(false);
    expect(
      isRefusal(
        closed(
          530,
          'NOT-ALLOWED',
          "NOT_ALLOWED - access to vhost '/' refused for user 'u': connection limit (5) is reached",
        ),
      ),
    ).toBe(false);
    expect(
      isRefusal(
        closed(
          406,
          'PRECONDITION-FAILED',
          "PRECONDITION_FAILED - cannot declare queue 'q': queue limit in vhost '/' (10) is reached",
        ),
      ),
    ).toBe(false);
    expect(
      isRefusal(
        closed(
          530,
          'NOT-ALLOWED',
          'NOT_ALLOWED - number of channels opened (2047) has reached the negotiated channel_max (2047)',
        ),
      ),
    ).toBe(false);
    expect(isRefusal(closed(530, 'NOT-ALLOWED', 'NOT_ALLOWED - vhost / is down'))).toBe(false);
  });
});
