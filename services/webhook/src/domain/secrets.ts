import type { SecretBox } from '@worklane/webhooks';

/**
 * A sealed secret opens only for the team it was sealed for, so a sealed value copied onto
 * another team's webhook is useless.
 */
const context = (teamId: number) => `webhook-secret:team:${teamId}`;

export const sealSecret = (box: SecretBox, secret: string, teamId: number) => box.seal(secret, context(teamId));

export const openSecret = (box: SecretBox, sealed: string, teamId: number) => box.open(sealed, context(teamId));
