import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PrismaPg } from '@prisma/adapter-pg';
import { createOutboxAdmin, emit, FERRY_HEADERS, fromPrisma } from '@ferry/core';
import { PrismaClient } from '../generated/prisma/client';
import { exampleConfig, type ExampleConfig } from './config';
import { freshDatabase } from './database';
import { startRoundTrip } from './pipeline';

export interface RoundTripCounts {
  readonly emitted: number;
  readonly sent: number;
  readonly duplicatesSent: number;
  readonly receipts: number;
  readonly duplicatesAbsorbed: number;
  readonly shipments: number;
  readonly distinctShipments: number;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Orders emitted in transactions → outbox relay → SQS → inbox → one shipment per order, duplicates included. */
export async function runSqsRoundTrip(
  config: ExampleConfig = exampleConfig(),
  orders = 20,
  duplicates = 5,
): Promise<RoundTripCounts> {
  const log = (line: string) => process.stdout.write(`sqs: ${line}\n`);
  await freshDatabase(config.databaseUrl);
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: config.databaseUrl }) });
  const roundTrip = await startRoundTrip(config, prisma);
  const count = async (sql: string) => (await prisma.$queryRawUnsafe<{ n: number }[]>(sql))[0]?.n ?? 0;
  try {
    const events: { id: string; payload: { orderId: string; amountCents: number } }[] = [];
    for (let i = 0; i < orders; i += 1) {
      const payload = { orderId: `order-${i}`, amountCents: 1_000 + i };
      const { id } = await prisma.$transaction(async (tx) => {
        await tx.order.create({ data: { id: payload.orderId, amountCents: payload.amountCents } });
        return emit(tx, { type: 'order.placed', payload, tenantId: config.tenant });
      });
      events.push({ id, payload });
    }
    log(`emitted ${orders} events; relaying through ${config.queue}`);
    await waitFor('a shipment per order', async () => (await count(SHIPMENTS)) >= orders);

    // SQS delivers at least once: send copies of some messages, as a redelivery would look.
    for (const event of events.slice(0, duplicates)) {
      await roundTrip.connection.client.send(
        new SendMessageCommand({
          QueueUrl: roundTrip.queueUrl,
          MessageBody: JSON.stringify(event.payload),
          MessageAttributes: {
            [FERRY_HEADERS.messageId]: { DataType: 'String', StringValue: event.id },
            [FERRY_HEADERS.tenantId]: { DataType: 'String', StringValue: config.tenant },
          },
        }),
      );
    }
    await waitFor('the duplicates absorbed', () => roundTrip.counts.duplicates >= duplicates);

    const counts: RoundTripCounts = {
      emitted: orders,
      sent: (await createOutboxAdmin(fromPrisma(prisma)).stats()).sent,
      duplicatesSent: duplicates,
      receipts: await count('SELECT count(*)::int AS n FROM ferry_inbox_receipts'),
      duplicatesAbsorbed: roundTrip.counts.duplicates,
      shipments: await count(SHIPMENTS),
      distinctShipments: await count('SELECT count(DISTINCT order_id)::int AS n FROM sqs_shipments'),
    };
    log(JSON.stringify(counts));
    return counts;
  } finally {
    await roundTrip.close();
    await prisma.$disconnect();
  }
}

const SHIPMENTS = 'SELECT count(*)::int AS n FROM sqs_shipments';

if (require.main === module) {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  runSqsRoundTrip().then(
    (counts) => {
      process.exitCode =
        counts.shipments === counts.emitted && counts.distinctShipments === counts.emitted ? 0 : 1;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
