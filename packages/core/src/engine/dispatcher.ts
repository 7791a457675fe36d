import { hostname } from 'node:os';
import * as v from 'valibot';
import { hasCode } from '../errors.js';
import type { AlertTransport, DeliveryContext } from '../ports/alert-transport.js';
import type { Cancel } from '../ports/clock.js';
import type { NewOutboxMessage, OutboxLease, OutboxMessage } from '../ports/storage.js';
import type { AlertChannel } from '../model/alert-channel.js';
import { isSubscriberMail, OutboxPayloadSchema, type SubscriberMailPayload } from '../model/outbox-payload.js';
import type { AlertChannelService } from '../services/alert-channels.js';
import { channelSecrets } from '../services/sealing.js';
import type { ServiceDeps } from '../services/deps.js';
import { SUBSCRIBER_MAIL, type StatusPageSubscriberService } from '../services/status-page-subscribers.js';
import { toAlertMessage } from './alert-message.js';
import { engineInstruments, type EngineInstruments } from './instruments.js';
import { scrubSecrets } from '../runner-kit/scrub.js';
import { policyForAccount } from '../runner-kit/target-policy.js';
import { withTimeLimit } from './time-limit.js';

export interface DispatcherOptions {
  /** How often the outbox is read. Default 1 s. */
  pollMs?: number;
  /** Most sends in flight at once (and claimed at once). Default 50. */
  batch?: number;
  /** How long a claimed alert belongs to this process. Default 60 s. */
  leaseMs?: number;
  /** Time limit of one send. Default 30 s. */
  sendTimeoutMs?: number;
  /** How long a failing alert is retried before it is given up. Default 24 h. */
  retryForMs?: number;
  /** The first retry's wait; each next one doubles, up to `backoffMaxMs`. Default 10 s. */
  backoffBaseMs?: number;
  /** The longest wait between two retries. Default 1 h. */
  backoffMaxMs?: number;
  /** Who this process's leases name. Default `<host>:<pid>:alerts:<random>`. */
  owner?: string;
}

export interface DispatcherServices {
  deps: ServiceDeps;
  alertChannels: AlertChannelService;
  /** Sends the emails of status-page subscriptions, which share the outbox. */
  statusPageSubscribers?: StatusPageSubscriberService;
}

/** The check and channel of a message: the outbox sends a check's alerts to a channel one after the other. */
const heldKey = (m: Pick<OutboxMessage, 'checkId' | 'alertChannelId'>) => `${m.checkId}\u0000${m.alertChannelId}`;

/** Where a payload failed its schema: the field, and what it lacks (never the value: it may be an account's words). */
function payloadProblems(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues.map((i) => `${v.getDotPath(i) ?? 'payload'}: ${i.input === undefined ? 'missing' : `expected ${i.expected ?? 'another value'}`}`).join('; ');
}

/** The channel of each alert of a batch, read once per channel (with its secrets opened). */
export type ChannelsOf = (m: Pick<OutboxMessage, 'accountId' | 'alertChannelId'>) => Promise<AlertChannel>;

/**
 * Delivers the outbox: claims due alerts (several processes share it; each alert goes to one),
 * sends each through the transport of its channel's type, and marks it delivered only once the
 * transport confirmed. A failed send is retried with exponential backoff for up to `retryForMs`;
 * every attempt is logged per channel. The outbox hands out a check's alerts to one channel in
 * order, the next only after the previous was delivered.
 */
export class AlertDispatcher {
  readonly owner: string;
  private readonly o: Required<Omit<DispatcherOptions, 'owner'>>;
  private timer: Cancel | null = null;
  private running = false;
  private polling: Promise<void> | null = null;
  private busy = false;
  private wakeAgain = false;
  private inFlight = new Set<Promise<void>>();
  /** The checks and channels of alerts this process queued and could not lease, behind one of its own. */
  private readonly waiting = new Set<string>();
  /** Room held by writes leasing alerts for this process (leaseTerms), until they answer. */
  private reserved = 0;
  private unreserved: (() => void) | null = null;
  /** A poll left due alerts for lack of room: the next send to finish claims again. */
  private claimOwed = false;
  private readonly meter: EngineInstruments;

  constructor(
    private readonly services: DispatcherServices,
    options: DispatcherOptions = {},
  ) {
    this.meter = engineInstruments(services.deps.metrics);
    this.o = {
      pollMs: options.pollMs ?? 1_000,
      batch: options.batch ?? 50,
      leaseMs: options.leaseMs ?? 60_000,
      sendTimeoutMs: options.sendTimeoutMs ?? 30_000,
      retryForMs: options.retryForMs ?? 24 * 3_600_000,
      backoffBaseMs: options.backoffBaseMs ?? 10_000,
      backoffMaxMs: options.backoffMaxMs ?? 3_600_000,
    };
    this.owner = options.owner ?? `${hostname()}:${process.pid}:alerts:${services.deps.ids.uuid().slice(0, 8)}`;
  }

  private get deps() {
    return this.services.deps;
  }

  get active(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.tick();
  }

  /** Claims nothing more and waits for the sends under way (and those of writes leasing for it now). */
  async stop(): Promise<void> {
    this.running = false;
    this.timer?.();
    this.timer = null;
    await this.polling;
    if (this.reserved > 0) await new Promise<void>((resolve) => (this.unreserved = resolve));
    this.unreserved = null;
    await Promise.allSettled([...this.inFlight]);
  }

  /** One round: claim what is due and send it; resolves when those sends are done. */
  async drain(): Promise<number> {
    const claimed = await this.deps.storage.outbox.claim(this.deps.clock.now(), this.o.batch, this.o.leaseMs, this.owner);
    const channelOf = this.channelsOf();
    await Promise.all(claimed.map((m) => this.track(this.deliver(m, channelOf))));
    return claimed.length;
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  /**
   * Reads the outbox now rather than at the next poll (this process has just queued alerts). A
   * wake during a round makes one more round follow it at once.
   */
  wake(): void {
    if (!this.running) return;
    if (this.busy) {
      this.wakeAgain = true;
      return;
    }
    this.timer?.();
    this.timer = null;
    this.tick();
  }

  /**
   * The terms on which this process takes alerts it has just queued straight from the write that
   * queued them, without a claim (see AlertStateRepository.transitionAndLease); null while it is
   * stopped or has no room.
   */
  leaseTerms(wanted: number): OutboxLease | null {
    const room = this.o.batch - this.inFlight.size - this.reserved;
    if (!this.running || room <= 0 || wanted <= 0) return null;
    // The room is held for the write until it answers (queued or release), so `batch` stays a limit.
    const limit = Math.min(room, wanted);
    this.reserved += limit;
    return { owner: this.owner, now: this.deps.clock.now(), leaseMs: this.o.leaseMs, limit };
  }

  /** Gives back the room of terms whose write did not go through. */
  release(terms: OutboxLease): void {
    this.reserved -= terms.limit;
    if (this.reserved === 0) this.unreserved?.();
  }

  /**
   * Alerts this process has just queued, and those of them leased to it on its leaseTerms, which it
   * sends at once, as if it had claimed them. The others are claimed: now, or once the alert of
   * their check and channel ahead of them here is sent (or room is free).
   */
  queued(messages: readonly NewOutboxMessage[], leased: readonly OutboxMessage[], terms: OutboxLease | null, channels?: ChannelsOf): void {
    // A stop under way waits for these sends too.
    if (terms) this.release(terms);
    this.sendAll(leased, false, channels);
    if (!this.running || leased.length === messages.length) return;
    const taken = new Set(leased.map((m) => m.id));
    for (const m of messages) if (!taken.has(m.id) && m.checkId !== null) this.waiting.add(heldKey(m));
    this.wake();
  }

  /** Starts the sends of messages leased to this process without waiting for them. */
  private sendAll(messages: readonly OutboxMessage[], claimed: boolean, channels?: ChannelsOf): void {
    if (messages.length === 0) return;
    const channelOf = channels ?? this.channelsOf();
    for (const m of messages) {
      void this.track(this.deliver(m, channelOf).catch((err: unknown) => {
        // The database went away mid-send: the lease runs out and the alert is claimed again.
        this.deps.logger.warn('alerts: recording a delivery failed', {
          accountId: m.accountId, checkId: m.checkId, alertChannelId: m.alertChannelId, outboxId: m.id, error: err instanceof Error ? err.message : String(err),
        });
      })).then(() => this.refill(m, claimed));
    }
  }

  /**
   * After a send: claim again when an alert may wait behind the one sent (it was claimed from the
   * shared outbox, or this process queued one of its check and channel after it), once half the
   * room is free (under load, one claim serves many finished sends) or at once when the dispatcher
   * is nearly idle, so the next alert of a sequence goes out without waiting for the poll. An alert
   * handed over from its step with nothing behind it needs no claim.
   */
  private refill(m: OutboxMessage, claimed: boolean): void {
    const key = m.checkId === null ? null : heldKey(m);
    const behind = key !== null && this.waiting.has(key);
    if (!claimed && !behind && !this.claimOwed) return;
    if (this.inFlight.size > this.o.batch / 2) {
      this.claimOwed = true;
      return;
    }
    if (behind) this.waiting.delete(key);
    this.wake();
  }

  /**
   * One poll: claims as many due alerts as there is room for (`batch` sends at most in flight) and
   * starts them without waiting, so a receiver that is slow to answer holds back no other.
   */
  private tick(): void {
    if (!this.running) return;
    this.busy = true;
    this.polling = (async () => {
      let more = true;
      while (more && this.running) {
        const room = this.o.batch - this.inFlight.size - this.reserved;
        if (room <= 0) {
          // What is due waits for room: the next send to finish claims it.
          this.claimOwed = true;
          break;
        }
        try {
          const claimed = await this.deps.storage.outbox.claim(this.deps.clock.now(), room, this.o.leaseMs, this.owner);
          // With nothing of this process in flight, no send of it holds back what is still waiting.
          if (claimed.length === 0 && this.inFlight.size === 0) this.waiting.clear();
          this.sendAll(claimed, true);
          more = claimed.length >= room;
          if (!more) this.claimOwed = false;
        } catch (err) {
          // The database is away: try again at the next poll.
          this.deps.logger.warn('alerts: reading the outbox failed', { error: err instanceof Error ? err.message : String(err) });
          more = false;
        }
      }
    })();
    void this.polling.finally(() => {
      this.busy = false;
      if (!this.running) return;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.tick();
        return;
      }
      this.timer?.();
      this.timer = this.deps.clock.setTimer(new Date(this.deps.clock.now().getTime() + this.o.pollMs), () => this.tick());
    });
  }

  /**
   * The channels of alerts about to be queued, their reads started now, for `queued` to send the
   * ones leased to this process with: a step reads them while its write runs, not after it.
   */
  channelsFor(messages: readonly Pick<OutboxMessage, 'accountId' | 'alertChannelId'>[]): ChannelsOf {
    const channelOf = this.channelsOf();
    for (const m of messages) void channelOf(m);
    return channelOf;
  }

  /** The channels of a claimed or handed-over batch, each read once (with its secrets opened). */
  private channelsOf(): ChannelsOf {
    const byKey = new Map<string, Promise<AlertChannel>>();
    return (m) => {
      const key = `${m.accountId}\u0000${m.alertChannelId}`;
      let p = byKey.get(key);
      if (!p) {
        p = this.services.alertChannels.getForDelivery(m.accountId, m.alertChannelId);
        p.catch(() => {});
        byKey.set(key, p);
      }
      return p;
    };
  }

  private async deliver(m: OutboxMessage, channelOf: ChannelsOf): Promise<void> {
    const { storage, clock } = this.deps;
    const log = (ok: boolean, detail: string | null) =>
      storage.outbox.recordAttempt({ outboxId: m.id, accountId: m.accountId, alertChannelId: m.alertChannelId, at: clock.now().toISOString(), ok, detail });
    const parsed = v.safeParse(OutboxPayloadSchema, m.payload);
    if (!parsed.success) return this.dropUnreadable(m, log, payloadProblems(parsed.issues));
    const payload = parsed.output;
    if (isSubscriberMail(payload)) return this.deliverMail(m, payload, log);
    let channel;
    try {
      channel = await channelOf(m);
    } catch (err) {
      if (!hasCode(err, 'NOT_FOUND')) throw err;
      // The channel was deleted: nobody is left to tell.
      await storage.outbox.markDelivered(m.id, this.owner, clock.now());
      await log(false, 'The alert channel was deleted; the alert was dropped');
      this.meter.deliveryAttempts.inc({ channel_type: 'unknown', result: 'dropped' });
      return;
    }
    const transport = this.deps.transports.get(channel.type);
    // What the send is told: the target policy of the channel's account, which its URLs must obey.
    const targetPolicy = await policyForAccount(this.deps.targetPolicy, m.accountId);
    const context: DeliveryContext = targetPolicy ? { targetPolicy } : {};
    const send = transport ? (signal: AbortSignal) => transport.send(toAlertMessage({ ...m, payload }), channel, signal, context) : null;
    await this.attempt(m, log, channel.type, send, `No transport for ${channel.type} channels is registered in this process`, channelSecrets(channel, transport));
  }

  /**
   * A row whose payload this version cannot read (written by hand, or by a version that writes it
   * differently): nothing can be sent from it and no retry changes that, so it leaves the queue,
   * logged as dropped, instead of being claimed again for `retryForMs`.
   */
  private async dropUnreadable(m: OutboxMessage, log: (ok: boolean, detail: string | null) => Promise<void>, problems: string): Promise<void> {
    const { storage, clock, logger } = this.deps;
    await storage.outbox.markDelivered(m.id, this.owner, clock.now());
    await log(false, `The payload cannot be read (${problems}); the message was dropped`);
    this.meter.deliveryAttempts.inc({ channel_type: 'unknown', result: 'dropped' });
    logger.error('alerts: dropped an outbox message whose payload cannot be read', {
      accountId: m.accountId, checkId: m.checkId, alertChannelId: m.alertChannelId, alertType: m.alertType, outboxId: m.id, problems,
    });
  }

  /** A status-page subscriber's email; dropped when there is nothing to send any more. */
  private async deliverMail(m: OutboxMessage, payload: SubscriberMailPayload, log: (ok: boolean, detail: string | null) => Promise<void>): Promise<void> {
    const subscribers = this.services.statusPageSubscribers;
    // Without the links' URL or a mailer this process cannot send it: it waits for one that can.
    const send = subscribers?.queueing && this.deps.subscriberMailer
      ? async (signal: AbortSignal) => (await subscribers.deliver({ accountId: m.accountId, payload }, signal))
        ?? { dropped: true, detail: 'Nothing to send any more (the subscriber, page or update is gone, or a newer email replaced it); dropped' }
      : null;
    await this.attempt(m, log, SUBSCRIBER_MAIL, send, 'This process has no subscriber mailer or no statusPageSubscriptions.publicUrl', []);
  }

  /**
   * One send under the time limit: marked delivered once it resolves (a receipt with `dropped`
   * counts as dropped); otherwise retried with backoff until `retryForMs` has passed since the
   * message was queued.
   */
  private async attempt(
    m: OutboxMessage,
    log: (ok: boolean, detail: string | null) => Promise<void>,
    channelType: string,
    send: ((signal: AbortSignal) => Promise<{ providerId?: string | null; detail?: string | null; dropped?: boolean } | undefined>) | null,
    unsendable: string,
    secrets: string[],
  ): Promise<void> {
    const { storage, clock, logger } = this.deps;
    const sendStart = clock.now().getTime();
    const measure = (result: 'delivered' | 'failed' | 'gave_up' | 'dropped') => {
      this.meter.deliveryAttempts.inc({ channel_type: channelType, result });
      if (send && result !== 'dropped') this.meter.deliveryDuration.observe({ channel_type: channelType, result }, Math.max(0, clock.now().getTime() - sendStart) / 1000);
    };
    let error: string;
    if (!send) {
      error = unsendable;
    } else {
      try {
        const receipt = await withTimeLimit(clock, this.o.sendTimeoutMs, send, () => {
          throw new Error(`No answer within ${Math.round(this.o.sendTimeoutMs / 1000)} s`);
        });
        const dropped = receipt?.dropped === true;
        measure(dropped ? 'dropped' : 'delivered');
        // Together, so that a store writing outcomes in batches puts both in one write.
        await Promise.all([
          storage.outbox.markDelivered(m.id, this.owner, clock.now()),
          log(!dropped, receipt?.providerId ? `delivered (${receipt.providerId})` : receipt?.detail ?? 'delivered'),
        ]);
        return;
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
    }
    const now = clock.now().getTime();
    const about = {
      accountId: m.accountId, checkId: m.checkId, alertChannelId: m.alertChannelId, channelType, alertType: m.alertType,
      outboxId: m.id, attempt: m.attempts + 1, error: scrubSecrets(error, secrets),
    };
    if (now - Date.parse(m.created_at) >= this.o.retryForMs) {
      // Past the retry window the alert leaves the queue; the log says it was never delivered.
      measure('gave_up');
      await Promise.all([storage.outbox.markDelivered(m.id, this.owner, clock.now()), log(false, `Given up after ${Math.round(this.o.retryForMs / 3_600_000)} h: ${error}`)]);
      logger.error('alerts: gave up on an alert', about);
      return;
    }
    const wait = Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** m.attempts);
    measure('failed');
    await Promise.all([storage.outbox.markFailed(m.id, this.owner, error, new Date(now + wait)), log(false, error)]);
    logger.warn('alerts: delivery failed; retrying later', { ...about, nextAttemptAt: new Date(now + wait).toISOString() });
  }
}
