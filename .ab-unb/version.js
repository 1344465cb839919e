/** This package's version, sent in `user-agent: agent-pep/<version>`. Kept equal to package.json by a test. */
export const VERSION = '0.1.0';
