import { pageNotFound } from '../context';

/** A positive integer id of a page's path; anything else is the not-found page. */
export const positiveId = (value: unknown): number => {
  if (typeof value !== 'string' || !/^[1-9]\d{0,15}$/.test(value)) throw pageNotFound();
  return Number(value);
};

/** The id of a delivery as the delivery service writes it (an integer or an opaque id). */
export const deliveryId = (value: unknown): string => {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(value)) throw pageNotFound();
  return value;
};
