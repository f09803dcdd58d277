/** A benchmark's numeric setting from the environment (BENCH_*), or its default; refuses a negative or non-numeric value. */
export function setting(name, fallback) {
  const value = Number(process.env[name] || fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
}
