CREATE TABLE demo_orders (
  id text PRIMARY KEY,
  customer_id text NOT NULL,
  amount_cents integer NOT NULL CHECK (amount_cents > 0),
  offered_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
