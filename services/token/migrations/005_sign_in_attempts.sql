-- Sign-in attempts counted per bucket ('account:<normalised email>' or 'address:<client address>')
-- over a fixed window that starts at the bucket's first attempt. Shared by every console replica:
-- an attempt reserves its slot in one transaction (row locks), so concurrent attempts cannot all
-- pass a check made before any of them was counted.
CREATE TABLE sign_in_attempts (
  bucket text PRIMARY KEY CHECK (length(bucket) <= 300),
  window_start timestamptz NOT NULL,
  attempts integer NOT NULL CHECK (attempts >= 0)
);
CREATE INDEX sign_in_attempts_window_start ON sign_in_attempts (window_start);
