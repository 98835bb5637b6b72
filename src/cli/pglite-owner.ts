import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite is one process's database: a second process opening the same files would corrupt them. The service records
 * its pid while it runs on PGlite; command-line tools refuse to start while that process is alive.
 */
const ownerFile = (dataDir: string) => join(dataDir, 'service.pid');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Called by the service when it opens PGlite; the file goes when it stops. */
export function claimPglite(dataDir: string) {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(ownerFile(dataDir), String(process.pid));
  const release = () => {
    if (existsSync(ownerFile(dataDir)) && readFileSync(ownerFile(dataDir), 'utf8').trim() === String(process.pid)) rmSync(ownerFile(dataDir), { force: true });
  };
  process.once('exit', release);
  return release;
}

/** Throws when the service is running on these PGlite files. */
export function assertServiceStopped(dataDir: string) {
  const file = ownerFile(dataDir);
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
    throw new Error(`the service (pid ${pid}) is running on the embedded database in ${dataDir}: stop it first (PGlite is single-process), or use DATABASE_URL`);
  }
}
