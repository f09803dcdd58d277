-- Per-project issue numbers: the row lock taken by the upsert serialises concurrent creates in
-- one project, so numbers are dense and never reused.
CREATE TABLE project_issue_counters (
  project_id bigint PRIMARY KEY,
  last_number integer NOT NULL
);

CREATE TABLE issues (
  id bigserial PRIMARY KEY,
  team_id bigint NOT NULL,
  organization_id bigint NOT NULL,
  project_id bigint NOT NULL,
  number integer NOT NULL,
  reference_code text NOT NULL,
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 255),
  description text,
  url text,
  type text NOT NULL DEFAULT 'task' CHECK (type IN ('bug', 'feature', 'task', 'improvement')),
  status text NOT NULL DEFAULT 'triage' CHECK (status IN ('triage', 'backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled')),
  priority text NOT NULL DEFAULT 'none' CHECK (priority IN ('none', 'low', 'medium', 'high', 'urgent')),
  assigned_to bigint,
  estimated_date date,
  created_by bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, number)
);

CREATE INDEX issues_by_project_newest_first ON issues (project_id, id DESC);

-- Events written in the same transaction as the change they describe; the relay publishes them
-- to JetStream and stamps published_at. `payload` is the exact JSON that receivers get.
CREATE TABLE outbox (
  id uuid PRIMARY KEY,
  subject text NOT NULL,
  payload text NOT NULL,
  trace_context jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);

CREATE INDEX outbox_unpublished ON outbox (created_at) WHERE published_at IS NULL;
CREATE INDEX outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL;
