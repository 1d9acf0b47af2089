CREATE TABLE sqs_orders (
  id text PRIMARY KEY,
  amount_cents integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sqs_shipments (
  id serial PRIMARY KEY,
  order_id text NOT NULL,
  event_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
