-- The messaging system that delivered a receipt (OpenTelemetry's messaging.system: rabbitmq,
-- kafka, aws_sqs), as the transport named it on acceptance; null for a message accepted without
-- one and for receipts stored before this migration. The handler's `process` span reports it.
-- Nullable without a default: adding it rewrites nothing.
ALTER TABLE ferry_inbox_receipts ADD COLUMN IF NOT EXISTS messaging_system text;
