import './use';
import '../review42-compactedSeek.test';
