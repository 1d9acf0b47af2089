import './use';
import '../review42-transactions.test';
