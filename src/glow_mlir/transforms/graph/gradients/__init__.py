"""What `differentiate` builds: gradient rules by op class, the losses and the SGD update."""
