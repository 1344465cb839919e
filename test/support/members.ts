/**
 * What a guard may not change on an SDK object (CONTRACT.md section 16: "no patched or private member
 * of an SDK object"): a snapshot of its methods and accessors, compared before and after guarding.
 */

/** Every own and inherited method and accessor of `o` (up to Object.prototype): its name and descriptor. */
export function memberShape(o: object): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  let depth = 0;
  for (let p: object | null = o; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p), depth++) {
    for (const key of Reflect.ownKeys(p)) {
      const d = Object.getOwnPropertyDescriptor(p, key) as PropertyDescriptor;
      // State (data that is not a function) comes and goes as the server runs; a patch replaces a member.
      const member = typeof d.value === 'function' || d.get !== undefined || d.set !== undefined;
      if (member) out.set(`${depth}:${String(key)}`, [d.value, d.get, d.set, d.writable, d.configurable]);
    }
  }
  return out;
}
