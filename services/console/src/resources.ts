// The API's resources as the console reads them (the README's "The API" and the delivery log).

export interface Organization {
  id: number;
  team_id: number;
  name: string;
  created_at: string;
}

export interface Project {
  id: number;
  organization_id: number;
  name: string;
  slug: string;
  description: string | null;
  github_repository: string | null;
  created_at: string;
}

export interface Issue {
  id: number;
  project_id: number;
  number: number;
  reference_code: string;
  title: string;
  type: string;
  status: string;
  priority: string;
  created_at: string;
}

export const WEBHOOK_EVENTS = ['issue.created', 'issue.updated'] as const;

export interface Webhook {
  id: number;
  team_id: number;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  updated_at: string;
}

export interface DeliveryAttempt {
  number: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The first 4 KiB of the response body. */
  response_body: string | null;
}

export interface Delivery {
  /** A UUID. */
  id: string;
  webhook_id: number;
  event: string;
  status: 'pending' | 'succeeded' | 'failed';
  failure_reason: 'gone' | 'exhausted' | 'webhook_deleted' | 'webhook_inactive' | null;
  attempt_count: number;
  next_attempt_at: string | null;
  redelivery_of: string | null;
  created_at: string;
}

export interface DeliveryDetail extends Delivery {
  attempts: DeliveryAttempt[];
}

export interface List<T> {
  data: T[];
  next_cursor?: string | null;
}
