import type { DriverAdmin } from './client/types';
import type { KafkaConnection } from './connection';
import { remember } from './kept';
import { missedDeadline, raceAbort, type Deadline } from './race';

/**
 * Topics a send failed on, checked before the next send to them. A send to a topic the broker
 * does not have waits until the client gives up on it (seconds, on the client's retries), and the
 * producer sends one request at a time, so every other send waits too: one mistyped destination
 * emitted steadily would slow the whole relay to a batch per give-up. A metadata answer takes one
 * round trip, so a missing topic costs that wait once, not once per publish.
 *
 * A topic is suspect after a send to it failed retryably (not for a cluster that is unavailable)
 * and stops being suspect once the cluster lists it or a send to it succeeds. Other topics are
 * never checked, so a healthy publisher makes no metadata requests and opens no admin client (nor
 * does it probe: `answering`, asked only for a record the cluster left unanswered twice). A
 * check that fails or misses its deadline says nothing: the caller sends as before, by the same
 * deadline (so after a check that spent it, nothing is sent). An admin client whose check failed
 * or was given up by a signal is replaced before the next check; one whose check missed its
 * deadline is kept while that check runs on, at most one more deadline (giveTime), so the next
 * check may find it connected.
 */
export class TopicPresence {
  private readonly suspects = new Set<string>();
  private admin: CheckAdmin | null = null;
  /** Admin clients given up on (a check that failed or missed its deadline), still closing. */
  private readonly dropping = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly connection: KafkaConnection,
    /** The owner's (clientRetryCeilingMs of its closeTimeoutMs); none: the client's own timings. */
    private readonly retryCeilingMs = Infinity,
  ) {}

  /**
   * A send to `topic` failed retryably: check it before the next send to it. At most
   * UNANSWERED_KEPT topics are suspect, the newest (review 124: a topic that never comes stayed
   * suspect for good, so ever new missing destinations grew the set without bound).
   */
  suspect(topic: string): void {
    remember(this.suspects, topic);
  }

  /** Sends to `topics` succeeded. */
  present(topics: Iterable<string>): void {
    for (const topic of topics) this.suspects.delete(topic);
  }

  /**
   * The suspect topics of `topics` the cluster does not have; empty when none is suspect, or when
   * the check failed, missed `deadline` (the publish's, shared with its send) or was aborted by
   * one of `signals`.
   */
  async missing(
    topics: ReadonlySet<string>,
    signals: readonly AbortSignal[],
    deadline: Deadline,
  ): Promise<Set<string>> {
    const suspects = [...topics].filter((topic) => this.suspects.has(topic));
    if (suspects.length === 0 || this.closed) return new Set();
    const listed = await this.list(signals, deadline);
    if (listed === null) return new Set();
    const existing = new Set(listed);
    this.present(suspects.filter((topic) => existing.has(topic)));
    return new Set(suspects.filter((topic) => !existing.has(topic)));
  }

  /**
   * Whether the cluster answers a small request (the topic listing) now, by `deadline`: the
   * publisher's probe before it charges a record unanswered again (KafkaPublisher.unanswered).
   * False when it failed, missed the deadline or was aborted by one of `signals`.
   */
  async answering(signals: readonly AbortSignal[], deadline: Deadline): Promise<boolean> {
    if (this.closed) return false;
    return (await this.list(signals, deadline)) !== null;
  }

  /** The cluster's topics, or null when the listing failed, missed `deadline` or was aborted. */
  private async list(signals: readonly AbortSignal[], deadline: Deadline): Promise<string[] | null> {
    const admin = this.connected();
    // This check takes over from those before it: their graces end (its own starts if it misses).
    for (const grace of admin.graces) clearTimeout(grace);
    admin.graces.clear();
    let listed: string[] = [];
    const listing = admin.client.then((client) => client.listTopics()).then((names) => (listed = names));
    try {
      await raceAbort(listing, signals, 'topic check', deadline);
    } catch (error) {
      // Given up by a signal (the publish aborted, the producer gone): its connect fails at once.
      if (missedDeadline(error, deadline)) this.giveTime(admin, listing, deadline.ms);
      else this.drop(admin);
      return null;
    }
    return listed;
  }

  /**
   * Disconnects the admin clients, the current one and those given up on; nothing of them runs
   * once it resolves, and nothing is checked afterwards. A dropped admin client's signal aborts,
   * which fails its connect in flight at once and destroys it once connected (a listing a silent
   * cluster never answers held its disconnect, and so the publisher's close(): review 102).
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.admin) this.drop(this.admin);
    await Promise.all(this.dropping);
  }

  private connected(): CheckAdmin {
    if (this.admin) return this.admin;
    const stop = new AbortController();
    const admin: CheckAdmin = {
      client: this.connection.driver.admin(stop.signal, this.retryCeilingMs),
      stop,
      graces: new Set(),
    };
    this.admin = admin;
    admin.client.catch(() => this.drop(admin));
    return admin;
  }

  /**
   * After a check of `admin` missed its deadline: the admin client is kept while that check runs
   * on, at most `ms` more (its grace), and dropped if the check fails or is still unanswered then,
   * unless a newer check took over (it ends the graces before it, and has its own if it misses).
   * On a slow cluster a new admin client's connect and listing (three round trips, more with TLS
   * or SASL) can outlast a deadline that a listing alone fits in; dropped at once, every check
   * started over and none finished, so a suspect topic kept its whole publish `unavailable` for
   * ever (test/slowTopicCheck, review 18). A silent cluster's is still dropped, one deadline after
   * the last check missed.
   */
  private giveTime(admin: CheckAdmin, listing: Promise<unknown>, ms: number): void {
    const grace = setTimeout(() => this.drop(admin), ms);
    grace.unref?.();
    admin.graces.add(grace);
    listing.then(
      () => {
        clearTimeout(grace);
        admin.graces.delete(grace);
      },
      () => this.drop(admin),
    );
  }

  /** Forgets `admin` (if still current), fails its connect if in flight, and disconnects it. */
  private drop(admin: CheckAdmin): void {
    for (const grace of admin.graces) clearTimeout(grace);
    admin.graces.clear();
    if (this.admin !== admin) return;
    this.admin = null;
    admin.stop.abort(new Error('the topic check was given up'));
    const closing = disconnect(admin.client);
    this.dropping.add(closing);
    void closing.then(() => this.dropping.delete(closing));
  }
}

/** An admin client of the check, and what fails its connect. */
interface CheckAdmin {
  readonly client: Promise<DriverAdmin>;
  readonly stop: AbortController;
  /** The graces of its checks that missed their deadline (giveTime). */
  readonly graces: Set<NodeJS.Timeout>;
}

async function disconnect(admin: Promise<DriverAdmin>): Promise<void> {
  try {
    await (await admin).disconnect();
  } catch {
    // Not connected, or already gone: nothing to close.
  }
}
