#!/usr/bin/python3
"""Issue 33, item 6: does averaging the class probabilities of two released models (post-processing),
each trained with half of epsilon, beat the better of them trained alone with all of it? Stratified 80/20,
seeds 1..10, eps 1, on eight classification sets where the candidates disagree; prints one line per set.

Usage: /usr/bin/python3 scripts/auto_combination.py [DATA_DIR]
"""
import json, os, sys, statistics as st
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learners_accuracy as la
from pathlib import Path
data=sys.argv[1] if len(sys.argv)>1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','..','shared','datasets')
PAIRS=[('naive_bayes','private_tree'),('private_tree','random_trees'),('naive_bayes','random_trees')]
def probs(db,feats,model):
    args=", ".join(la.quote(f) for f in feats)
    return [json.loads(r[0]) for r in db.execute(f"SELECT rdt_predict_proba(?, {args}) FROM test ORDER BY rid",(model,))]
out={}
for name in ['iris','wine','zoo','car','banknote','chile','digits','balance_scale']:
    db=la.connect(); feats,doms,classes,n=la.load(db,Path(data)/name/f"{name}.csv",name)
    common=la.task_options(doms,classes)
    res={}
    for seed in range(1,11):
        la.split(db,seed,False)
        ys=[r[0] for r in db.execute("SELECT y FROM test ORDER BY rid")]
        P={}
        for eps in (1.0,0.5):
            for alg in ['naive_bayes','private_tree','random_trees']:
                m=la.train(db,feats,dict(common,algorithm=alg,epsilon=eps,seed=seed*7+int(eps*10)))
                P[(alg,eps)]=probs(db,feats,m)
        def acc(pl):
            return st.mean(1.0 if max(p,key=p.get)==str(y) or max(p,key=p.get)==y else 0.0 for p,y in zip(pl,ys))
        for alg in ['naive_bayes','private_tree','random_trees']:
            res.setdefault(alg+'@1',[]).append(acc(P[(alg,1.0)]))
        for a,b in PAIRS:
            avg=[{k:(pa[k]+pb[k])/2 for k in pa} for pa,pb in zip(P[(a,0.5)],P[(b,0.5)])]
            res.setdefault(f'{a[:5]}+{b[:5]}@.5',[]).append(acc(avg))
    out[name]={k:st.mean(v) for k,v in res.items()}
    print(name,' '.join(f"{k}={v:.3f}" for k,v in out[name].items()),flush=True)
