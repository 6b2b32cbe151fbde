// The applier lands with the reconcile issue (#4); this file keeps the target buildable until then.
import TSPlan
import TSDevice
