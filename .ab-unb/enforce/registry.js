const KERNELS = new WeakMap();
/** Registers the enforcement layer of a client. @internal */
export function registerKernel(pep, kernel) {
    KERNELS.set(pep, kernel);
}
/** The enforcement layer of a client made by `createPep`, or undefined for any other object. @internal */
export function kernelOf(pep) {
    return typeof pep === 'object' && pep !== null ? KERNELS.get(pep) : undefined;
}
