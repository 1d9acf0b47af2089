CREATE TABLE outbox_to_kafka_orders (
  id text PRIMARY KEY,
  customer_id text NOT NULL,
  amount_cents integer NOT NULL CHECK (amount_cents > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
