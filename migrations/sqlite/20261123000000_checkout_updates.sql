-- A checkout's status can change after it completes: a delayed payment
-- (SEPA Direct Debit) settles days later as paid or failed. payment_status
-- now holds the latest settled status ("failed" included); updated_at says
-- when it last changed.
ALTER TABLE completed_checkouts ADD COLUMN updated_at BIGINT;
