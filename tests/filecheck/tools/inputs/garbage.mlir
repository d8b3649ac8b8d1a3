PK this is a zip file, not MLIR }}} {{ @@ %% 
