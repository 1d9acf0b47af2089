/**
 * Review 91 (failed first): the accept and process spans of a consumer named by a URL.
 *
 * User: a third party's transport (or an application) that names its inbox consumer by the queue
 * it reads, a URL holding a user and password (`https://ferry:hunter2@sqs.internal/.../orders`).
 * Review 90 took a URL's user and password out of metric labels (the consumer label among them)
 * and out of the publish span's name and destination, so no trace backend gets them.
 * What happened: the `accept <consumer>` and `process <consumer>` spans still carried the
 * password, in their name and in `messaging.consumer.group.name`, exported with every delivery.
 * What should happen: as the publish span, the consumer shown without the user and password.
 */
import { SpanKind } from '@opentelemetry/api';
import { useTracedDatabase } from './tracing/helpers';
import { makeInbox, message } from './inbox/helpers';

const CONSUMER = 'https://ferry:hunter2@sqs.internal/000000000000/orders';
const env = useTracedDatabase();

it('no accept or process span holds the password of a consumer named by a URL', async () => {
  const inbox = makeInbox(env.db().prisma, { handlers: { [CONSUMER]: async () => undefined } });
  await inbox.accept(message({ consumer: CONSUMER }));
  expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
  const spans = env
    .tracing()
    .spans()
    .filter((s) => s.kind === SpanKind.CONSUMER);
  expect(spans.map((s) => s.name.split(' ')[0]).sort()).toEqual(['accept', 'process']);
  for (const span of spans) {
    expect(JSON.stringify({ name: span.name, attributes: span.attributes })).not.toContain('hunter2');
    expect(span.attributes['messaging.consumer.group.name']).toContain('sqs.internal/000000000000/orders');
  }
});
