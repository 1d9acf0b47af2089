import './use';
import '../review42-outOfRange.test';
