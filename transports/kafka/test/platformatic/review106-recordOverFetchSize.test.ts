import './use';
import '../review106-recordOverFetchSize.test';
