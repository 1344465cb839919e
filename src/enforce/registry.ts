/**
 * Which enforcement layer belongs to which client: `createPep` registers each client it makes (and each
 * `withSession` binding), and adapters find it from the `Pep` they are given (docs/adapters.md).
 * @internal
 */
import type { Kernel } from './kernel.js';

const KERNELS = new WeakMap<object, Kernel>();

/** Registers the enforcement layer of a client. @internal */
export function registerKernel(pep: object, kernel: Kernel): void {
  KERNELS.set(pep, kernel);
}

/** The enforcement layer of a client made by `createPep`, or undefined for any other object. @internal */
export function kernelOf(pep: unknown): Kernel | undefined {
  return typeof pep === 'object' && pep !== null ? KERNELS.get(pep) : undefined;
}
