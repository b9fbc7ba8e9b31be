options(digits=17)
a <- c(0.81, 0.82, 0.84, 0.78, 0.85, 0.86, 0.82, 0.83, 0.82, 0.81)
b <- c(0.80, 0.77, 0.70, 0.83, 0.80, 0.78, 0.75, 0.80, 0.78, 0.77)
tt <- t.test(a, b, paired=TRUE); cat("ttest", tt$statistic, tt$p.value, tt$conf.int, "\n")
tt <- t.test(a, b, paired=TRUE, alternative="less", conf.level=0.9); cat("less", tt$p.value, tt$conf.int, "\n")
tt <- t.test(a, b, paired=TRUE, alternative="greater", conf.level=0.99); cat("greater", tt$p.value, tt$conf.int, "\n")
# MANOVA L=3, k=5, p=2
X <- array(0, c(3,5,2))
xs <- list(list(c(0.8, 0.115), c(0.786, 0.055), c(0.777, 0.05), c(0.803, 0.167), c(0.775, 0.069)), list(c(0.874, 0.138), c(0.855, 0.073), c(0.849, 0.155), c(0.783, 0.097), c(0.755, 0.056)), list(c(0.688, 0.078), c(0.717, 0.104), c(0.788, 0.081), c(0.654, 0.063), c(0.778, 0.096)))
Ym <- do.call(rbind, lapply(xs, function(g) do.call(rbind, g))); g <- factor(rep(1:3, each=5))
fit <- manova(Ym ~ g)
for (t in c("Wilks","Pillai","Hotelling-Lawley","Roy")) { s <- summary(fit, test=t)$stats; cat("man1", t, s[1,2:6], "\n") }
Y <- c(0.423, 0.276, 0.151, 0.46, 0.353, 0.16, 0.498, 0.344, 0.171, 0.494, 0.306, 0.203, 0.439, 0.304, 0.268, 0.423, 0.343, 0.206, 0.488, 0.39, 0.268, 0.46, 0.294, 0.259, 0.511, 0.324, 0.227, 0.553, 0.362, 0.196, 0.53, 0.267, 0.236, 0.461, 0.261, 0.22, 0.585, 0.337, 0.194, 0.5, 0.312, 0.16, 0.517, 0.275, 0.323, 0.574, 0.264, 0.242, 0.527, 0.356, 0.239, 0.525, 0.298, 0.254, 0.55, 0.214, 0.289, 0.538, 0.328, 0.323, 0.559, 0.303, 0.273, 0.613, 0.27, 0.319, 0.495, 0.287, 0.206, 0.458, 0.255, 0.245)
Y2 <- matrix(Y, ncol=3, byrow=TRUE); g2 <- factor(rep(1:4, each=6))
fit2 <- manova(Y2 ~ g2)
for (t in c("Wilks","Pillai","Hotelling-Lawley","Roy")) { s <- summary(fit2, test=t)$stats; cat("man2", t, s[1,2:6], "\n") }
cat("eig2", summary(fit2)$Eigenvalues, "\n")
# p.adjust
p <- c(0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.001, 0.03, 0.2, 0.0005)
for (m in c("bonferroni","holm","hochberg","hommel","BH","BY")) cat("padj", m, p.adjust(p, m), "\n")
# binom.test CIs
for (kn in list(c(0,100), c(1,100), c(12,100), c(100,100), c(3,1000000), c(429, 1000))) { ci <- binom.test(kn[1], kn[2])$conf.int; cat("cp", kn, ci, "\n") }
ci <- binom.test(7, 40, conf.level=0.9)$conf.int; cat("cp90", ci, "\n")
# mcnemar
tab <- matrix(c(30, 12, 4, 54), 2, byrow=TRUE)
m1 <- mcnemar.test(tab); cat("mcn", m1$statistic, m1$p.value, "\n")
m2 <- mcnemar.test(tab, correct=FALSE); cat("mcn_nc", m2$statistic, m2$p.value, "\n")
m3 <- mcnemar.test(matrix(c(10,5,5,10),2)); cat("mcn_tie", m3$statistic, m3$p.value, "\n")
cat("mcn_exact", binom.test(4, 16)$p.value, "\n")
# blocked anova
A <- matrix(c(0.81,0.82,0.84,0.78,0.85,0.86, 0.80,0.77,0.70,0.83,0.80,0.78, 0.75,0.80,0.78,0.77,0.72,0.74), nrow=3, byrow=TRUE)
d <- data.frame(y=as.vector(t(A)), alg=factor(rep(1:3, each=6)), fold=factor(rep(1:6, 3)))
s <- summary(aov(y ~ alg + Error(fold/alg), data=d)); cat("rm", unlist(s[["Error: fold:alg"]][[1]][1, c("F value","Pr(>F)")]), "\n")
s1 <- summary(aov(y ~ alg, data=d)); cat("ow", unlist(s1[[1]][1, c("F value","Pr(>F)")]), "\n")
# Mardia by hand (Mardia 1970)
M <- matrix(c(0.164, 2.245, 0.692, -0.624, 0.205, 0.243, -0.176, -0.206, 0.493, 0.52, -1.034, 0.006, 0.035, -1.054, 0.068, -0.858, 0.972, 0.037, 0.089, -0.591, 0.014, -1.998, -1.131, 0.132, -2.129, 0.847, 3.049, 0.757, -0.845, 0.607, 0.131, -1.537, 1.56, 1.442, -0.066, 0.075), ncol=3, byrow=TRUE)
n <- nrow(M); pp <- ncol(M); Xc <- scale(M, scale=FALSE); S <- crossprod(Xc)/n; G <- Xc %*% solve(S) %*% t(Xc)
b1 <- sum(G^3)/n^2; b2 <- sum(diag(G)^2)/n; sk <- n*b1/6; dfs <- pp*(pp+1)*(pp+2)/6
z <- (b2 - pp*(pp+2))/sqrt(8*pp*(pp+2)/n)
cat("mardia", b1, b2, sk, pchisq(sk, dfs, lower.tail=FALSE), z, 2*pnorm(-abs(z)), "\n")
