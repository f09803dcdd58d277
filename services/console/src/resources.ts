// The API's resources as the console reads them (DESIGN.md section 2 and the delivery log).

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
  id?: number;
  attempted_at?: string;
  created_at?: string;
  status_code?: number | null;
  error?: string | null;
  duration_ms?: number | null;
  response_body?: string | null;
  response_excerpt?: string | null;
}

export interface Delivery {
  id: string | number;
  webhook_id: number;
  event: string;
  status: string;
  attempts_count?: number;
  attempt_count?: number;
  created_at: string;
  attempts?: DeliveryAttempt[];
}

export interface List<T> {
  data: T[];
  next_cursor?: string | null;
}
