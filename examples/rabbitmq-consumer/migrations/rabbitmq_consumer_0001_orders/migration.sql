CREATE TABLE rabbitmq_consumer_orders (
  id serial PRIMARY KEY,
  order_id text NOT NULL,
  tenant_id text NOT NULL,
  amount_cents integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rabbitmq_consumer_tenant_settings (
  tenant_id text PRIMARY KEY,
  refunds_enabled boolean NOT NULL DEFAULT false
);
