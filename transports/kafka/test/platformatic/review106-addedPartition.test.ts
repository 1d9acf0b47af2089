import './use';
import '../review106-addedPartition.test';
