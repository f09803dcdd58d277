-- Organizations belong to a team (owned by the token service: no foreign key across services).
CREATE TABLE organizations (
  id         bigserial PRIMARY KEY,
  team_id    bigint NOT NULL CHECK (team_id > 0),
  name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX organizations_team_id_idx ON organizations (team_id, id);

CREATE TABLE projects (
  id                bigserial PRIMARY KEY,
  organization_id   bigint NOT NULL REFERENCES organizations (id),
  name              text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  -- "C" collation: slugs are ASCII, and it lets the prefix scan that finds taken slugs use the index.
  slug              text COLLATE "C" NOT NULL CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND char_length(slug) <= 250),
  description       text CHECK (char_length(description) <= 10000),
  github_repository text CHECK (char_length(github_repository) <= 140),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT projects_organization_id_slug_key UNIQUE (organization_id, slug)
);
