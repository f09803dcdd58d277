-- Users, teams and who belongs to which team.
CREATE TABLE users (
  id bigserial PRIMARY KEY,
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  -- scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>: the parameters travel with each hash.
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- One account per address whatever its case.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE teams (
  id bigserial PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX memberships_user_id_idx ON memberships (user_id);
